/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * What a new user of the playground (`npm start`) meets, in Chromium through the real
 * playground server: where it keeps its channels, the agent panel after a page reload,
 * and the reader's cards and Ask button as a person reads them.
 */
import assert from "node:assert/strict";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { chromium } from "playwright-core";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, startPlayground, tempDataDir } from "./support/helpers.js";
import { readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

describe("the playground as a new user meets it", { skip, timeout: 180_000 }, () => {
  const rig = readerRigForSuite();

  test("with no store chosen, it keeps its channels in a data directory of its own and says where", async () => {
    const temp = await tempDataDir();
    // The user's real data directory is $XDG_STATE_HOME/backchannel; the environment names no store.
    const state = join(temp.dir, "state");
    await mkdir(state);
    const playground = await startPlayground("", [], { BACKCHANNEL_HOME: "", XDG_STATE_HOME: state, HOME: join(temp.dir, "home") });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(playground.url.href);
      await page.locator("#channel", { hasText: /^ch-/ }).waitFor();
      const channelId = (await page.locator("#channel").textContent())!;
      const own = join(state, "backchannel-playground");
      assert.deepEqual(await readdir(join(own, "channels")), [channelId], "the sample's channel is in the playground's own directory");
      assert.deepEqual(await readdir(state), ["backchannel-playground"], "nothing in the user's real data directory");
      assert.match(playground.stderr(), new RegExp(`data in ${own.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(the playground's own`));
      assert.match((await page.locator("#watch").textContent()) ?? "", new RegExp(`--home ${own}`), "an outside agent is told where to look");
    } finally {
      await browser.close();
      await playground.stop();
      await temp.cleanup();
    }
  });

  test("after a reload, the agent panel lists the unanswered question, and answering it reaches the reader", async () => {
    const reader = await rig.open();
    const frame = await reader.frame();
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.selectAndAsk("sequence number");
    await reader.submit("Answered before the reload?");
    const first = reader.page.locator("#inbox li", { hasText: "Answered before the reload?" });
    await first.locator("textarea").fill("Yes.");
    await first.locator("button", { hasText: "Send answer" }).click();
    await frame.locator(".card .message.agent", { hasText: "Yes." }).waitFor();
    await reader.selectAndAsk("two queues");
    await reader.submit("Still waiting after the reload?");
    await reader.page.locator("#inbox li", { hasText: "Still waiting after the reload?" }).waitFor();

    await reader.page.reload();
    const after = await reader.frame();
    await after.locator(".card .message.user", { hasText: "Still waiting after the reload?" }).waitFor();
    const waiting = reader.page.locator("#inbox li", { hasText: "Still waiting after the reload?" });
    await waiting.locator("textarea").waitFor();
    assert.equal(await reader.page.locator("#inbox li textarea").count(), 1, "only the unanswered question asks for an answer");
    await waiting.locator("textarea").fill("**Yes**, and now it has an answer.");
    await waiting.locator("button", { hasText: "Send answer" }).click();
    await after.locator(".card .message.agent strong", { hasText: "Yes" }).waitFor();
    // The panel shows the answer as the reader does: markdown rendered, not its source.
    assert.equal(await waiting.locator(".answered strong").textContent(), "Yes");
    assert.doesNotMatch((await waiting.textContent()) ?? "", /\*\*/);
    await reader.page.close();
  });

  test("the agent panel renders an answer's markdown without running its HTML", async () => {
    const reader = await rig.open();
    const frame = await reader.frame();
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.selectAndAsk("doorbell");
    await reader.submit("Safe?");
    const item = reader.page.locator("#inbox li", { hasText: "Safe?" });
    await item.locator("textarea").fill('<img src=x onerror="document.title=1"> `code`');
    await item.locator("button", { hasText: "Send answer" }).click();
    await item.locator(".answered code", { hasText: "code" }).waitFor();
    assert.equal(await item.locator(".answered img").count(), 0, "raw HTML stays text");
    assert.match((await item.locator(".answered").textContent()) ?? "", /<img src=x/);
    await reader.page.close();
  });

  test("the Ask button's label fits what is selected", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    const select = (text: string, focusBlock: boolean) =>
      frame.evaluate(
        ({ text, focusBlock }) => {
          const block = [...document.querySelectorAll<HTMLElement>("#doc [data-block]")].find((element) => element.textContent?.includes(text))!;
          if (focusBlock) {
            // As a click into the paragraph leaves it: the paragraph has the keyboard focus.
            block.tabIndex = 0;
            block.focus();
          } else (document.activeElement as HTMLElement | null)?.blur();
          const node = [...block.childNodes].find((child) => child.nodeType === Node.TEXT_NODE && child.textContent!.includes(text))!;
          const start = node.textContent!.indexOf(text);
          const range = document.createRange();
          range.setStart(node, start);
          range.setEnd(node, start + text.length);
          document.getSelection()!.removeAllRanges();
          document.getSelection()!.addRange(range);
        },
        { text, focusBlock },
      );
    /** The label once it is `expected`, else what it says after 5 s. */
    const label = async (expected: string) => {
      const exactly = new RegExp(`^${expected.replace(/[()]/g, "\\$&")}$`);
      await frame
        .locator("#ask", { hasText: exactly })
        .waitFor({ timeout: 5_000 })
        .catch(() => undefined);
      return frame.locator("#ask").textContent();
    };
    await select("sequence number", true);
    assert.equal(await label("Ask about these words (Enter)"), "Ask about these words (Enter)");
    await select("The agent only acts during a turn, so something has to give it one.", true);
    assert.equal(await label("Ask about this sentence (Enter)"), "Ask about this sentence (Enter)");
    await select("doorbell", false);
    assert.equal(await label("Ask about this word"), "Ask about this word");
    await reader.page.close();
  });

  test("a waiting card stands out, says so to screen readers, and the header counts the waiting questions", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    assert.equal(await frame.locator("#waiting-count").textContent(), "");
    await reader.selectAndAsk("sequence number");
    await reader.submit("One?");
    const { message: one } = await reader.nextMessage("ask");
    await reader.selectAndAsk("doorbell");
    await reader.submit("Two?");
    const { message: two } = await reader.nextMessage("ask");
    const count = frame.locator("#waiting-count");
    await count.filter({ hasText: "2 questions waiting" }).waitFor();
    assert.equal(await count.getAttribute("role"), "status");

    const first = frame.locator(`.card[data-thread="${String(one.data.thread_id)}"]`);
    const second = frame.locator(`.card[data-thread="${String(two.data.thread_id)}"]`);
    assert.equal(await first.locator(".card-state[role=status]").textContent(), "Waiting for an answer");
    await reader.answer(String(one.data.thread_id), "One.", "One.");
    await count.filter({ hasText: /^1 question waiting$/ }).waitFor();
    assert.equal(await first.locator(".card-state[role=status]").textContent(), "Answered");
    const look = (card: typeof first) =>
      card.evaluate((element) => {
        const style = getComputedStyle(element);
        return { left: style.borderLeftWidth, color: style.borderLeftColor };
      });
    const [answered, waiting] = [await look(first), await look(second)];
    assert.notEqual(waiting.left, answered.left, "a waiting card's edge is wider");
    assert.notEqual(waiting.color, answered.color, "and in another colour");
    await reader.answer(String(two.data.thread_id), "Two.", "Two.");
    await frame.waitForFunction(() => document.getElementById("waiting-count")?.textContent === "");
    await reader.page.close();
  });

  test("nothing failed in the pages", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
