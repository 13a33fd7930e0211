/**
 * The Claude Code journey with the plugin, whole: the real Claude Code (the pinned
 * version, see test/support/claude-code/) loaded with `--plugin-dir <checkout>/plugin`
 * and nothing else configured, a scripted model that follows backchannel's
 * instructions as Claude Code shows them (test/support/claude-code/plugin-policy.ts: it
 * arms nothing, gives the person the link open_reader's result names, and answers each
 * wake with notify_ui), and a person in Chromium who opens that link. Claude Code shows
 * no apps, so the reader is the browser host's page (web/), started by the plugin's
 * server on demand.
 *
 * Five asks, follow-ups among them, each answered on screen within two model requests;
 * a reload keeps every thread; a second document comes as a second link, opened in a
 * second tab.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Frame, Page } from "playwright-core";
import { readerFrame } from "./support/browser-host.js";
import { type BrowserTabRig, startBrowserTabRig } from "./support/claude-code/browser-rig.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { openFromReply, pluginPolicy, pluginTool as tool, waitForWatcher } from "./support/claude-code/plugin-policy.js";
import { browserSkipReason } from "./support/helpers.js";
import { askAbout, askFollowUp } from "./support/reader-driver.js";

const skip = claudeCodeSkipReason() ?? browserSkipReason();

const FIRST = {
  title: "Queue notes",
  markdown: "# Queue notes\n\nThe queue is the truth.\n\nAn answer clears the ask it acknowledges.\n",
};
const SECOND = {
  title: "Hook notes",
  markdown: "# Hook notes\n\nThe hook wakes the agent after its turn.\n\nA one-shot run has nothing to wake.\n",
};
/** The person's prompts, and the document each opens. */
const PROMPTS: Record<string, typeof FIRST> = {
  "Open the reader on my queue notes.": FIRST,
  "Now open my hook notes too.": SECOND,
};

describe("Claude Code with the plugin: the person reads and asks in a browser tab", { skip, timeout: 600_000 }, () => {
  let rig: BrowserTabRig;

  before(async () => {
    rig = await startBrowserTabRig(pluginPolicy({ open: (prompt) => Object.entries(PROMPTS).find(([asked]) => prompt.includes(asked))?.[1] }));
  });

  after(async () => {
    await rig?.close();
  });

  test("the reply carries the link; five asks answered in the tab, ≤ 2 model requests each; a reload keeps them; a second document opens a second tab", async (t) => {
    const { dataDir, model, session, browser } = rig;
    const first = await openFromReply(session, model, "Open the reader on my queue notes.");
    assert.match(
      JSON.stringify(model.turns()[0]!.request),
      /give the person that link/,
      "Claude Code shows the model the instructions' link sentence",
    );
    const context = await browser.newContext();
    const tab = await readerTab(context.newPage(), first);
    await tab.frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await waitForWatcher(dataDir);

    const asked: { page: Page; thread: string; answers: number }[] = [];
    const ask = async (frame: Frame, question: string, passage?: string, thread?: string) => {
      const before = model.turns().length;
      if (passage) await askAbout(frame, passage, question);
      else await askFollowUp(frame, thread!, question);
      const card = frame.locator(".card", { has: frame.locator(".message.user", { hasText: question }) });
      const id = (await card.getAttribute("data-thread"))!;
      const answers = (asked.find((entry) => entry.thread === id)?.answers ?? 0) + 1;
      await card
        .locator(".message.agent")
        .nth(answers - 1)
        .filter({ hasText: `to ${id}` })
        .waitFor({ timeout: 120_000 });
      // The turn that answered ends before the next ask, so that each ask's requests can be counted.
      await model.waitForTurn((turn) => turn.result(tool("notify_ui")) !== undefined, { from: before, timeoutMs: 60_000 });
      const requests = model.turns().length - before;
      t.diagnostic(`"${question}": answered on screen after ${requests} model requests`);
      assert.ok(requests <= 2, `"${question}" took ${requests} model requests`);
      const entry = asked.find((known) => known.thread === id);
      if (entry) entry.answers = answers;
      else asked.push({ page: frame.page(), thread: id, answers });
      await waitForWatcher(dataDir);
      return id;
    };

    const queue = await ask(tab.frame, "Why is the queue the truth?", "The queue is the truth.");
    await ask(tab.frame, "And when it is full?", undefined, queue);
    await ask(tab.frame, "Which ask does it clear?", "clears the ask");

    const second = await openFromReply(session, model, "Now open my hook notes too.");
    assert.notEqual(new URL(second).hash, new URL(first).hash, "the second document is on its own channel");
    const secondTab = await readerTab(context.newPage(), second);
    assert.equal(await secondTab.frame.locator("#title").textContent(), SECOND.title);
    const hook = await ask(secondTab.frame, "After which turn?", "wakes the agent");
    await ask(secondTab.frame, "Even a one-shot one?", undefined, hook);
    assert.equal(
      asked.reduce((sum, entry) => sum + entry.answers, 0),
      5,
    );

    for (const page of [tab.page, secondTab.page]) {
      await page.reload();
      const frame = await readerFrame(page);
      for (const entry of asked.filter((known) => known.page === page)) {
        const answers = frame.locator(`.card[data-thread="${entry.thread}"] .message.agent`);
        await answers.nth(entry.answers - 1).waitFor();
        assert.equal(await answers.count(), entry.answers, `thread ${entry.thread} keeps its answers after a reload`);
      }
      await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    }
    await context.close();
  });
});

/** Opens `link` in `opening` (a new tab); resolves once the reader shows its document. */
async function readerTab(opening: Promise<Page>, link: string): Promise<{ page: Page; frame: Frame }> {
  const page = await opening;
  await page.goto(link);
  return { page, frame: await readerFrame(page) };
}
