/**
 * The reader popped out of a chat into a browser tab (app/pop-out.ts, web/host.ts),
 * from the playground's chat and from MCP Inspector's. In Inspector's Apps host (a real in-chat host, test/support/inspector.ts), the
 * person presses "Open in a browser tab"; Inspector opens the link (`openLink`) in a
 * new tab of the same browser, where the browser host shows the same channel. A
 * question asked in either, and its answer, then show in both (see SAME_ANSWER_MS for
 * how close together). The agent is an SDK client on its own server process; the server
 * Inspector reaches is `serve --http` on loopback, whose browser host is on this machine.
 */
import assert from "node:assert/strict";
import { describe, type TestContext, test } from "node:test";
import { chromium, type Frame, type Page } from "playwright-core";
import { readerFrame, stopBrowserHost } from "./support/browser-host.js";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, startPlayground } from "./support/helpers.js";
import { inspectorForSuite } from "./support/inspector.js";
import { askAbout, ReaderAgent, watchAnswer } from "./support/reader-driver.js";

const DOCUMENT = [
  "# Two places",
  "",
  "The chat shows the reader inline, where the conversation is.",
  "",
  "The browser tab shows the same channel beside it, as large as the screen allows.",
].join("\n");

/**
 * The chat's reader and the tab's show an answer at most this far apart. Each reader
 * polls as a reader of its own (store/readers.ts), so neither takes the answer away from
 * the other: both are woken by the same append.
 */
const SAME_ANSWER_MS = 1_000;

const skip = browserSkipReason();

describe("the reader popped out into a browser tab", { skip, timeout: 600_000 }, () => {
  const rig = inspectorForSuite("http", (dataDir) => stopBrowserHost({ BACKCHANNEL_HOME: dataDir }));

  test("from MCP Inspector: the tab shows the channel, and a question asked in either, and its answer, show in both", async (t) => {
    const { inspector, server, dataDir } = rig;
    const channelId = "ch-pop-out";
    const agent = await ReaderAgent.start(dataDir, channelId);
    try {
      const opened = await inspector.openApp(server, "open_reader", { title: "Two places", markdown: DOCUMENT, channel_id: channelId });
      await opened.app.locator("#doc p").first().waitFor();
      await agent.next("ready", 60_000);
      await agent.send("hello", {});

      await popOutAndAsk(t, { page: opened.page, frame: opened.frame }, agent, channelId, ["shows the reader inline", "beside it"]);
      await opened.close();
    } finally {
      await agent.close();
    }
  });

  test("from the playground: the same, the tab on the store's own browser host", async (t) => {
    const { dataDir } = rig;
    const playground = await startPlayground(dataDir);
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    let agent: ReaderAgent | undefined;
    try {
      const page = await browser.newPage();
      // Another agent reads the channel (the test's), as with ?agent=off.
      await page.goto(playground.page("/?agent=off"));
      const frame = await readerFrame(page);
      const channelId = (await page.locator("#channel").textContent())!;
      assert.match(channelId, /^ch-/);
      agent = await ReaderAgent.start(dataDir, channelId);
      await agent.next("ready", 60_000);
      await agent.send("hello", {});
      await popOutAndAsk(t, { page, frame }, agent, channelId, ["Every channel has two queues", "never handles a message twice"]);
    } finally {
      await agent?.close();
      await browser.close();
      await playground.stop();
    }
  });
});

/**
 * Presses "Open in a browser tab" in the chat's reader (`chat.frame`, open on `channelId`
 * with `agent` listening), checks the tab the chat opens (the browser host's session, no
 * key left, the same channel, no second pop-out), then asks about `passages[0]` in the
 * chat and `passages[1]` in the tab: each question and its answer show in both readers,
 * the answer within {@link SAME_ANSWER_MS} of each other. Closes the tab.
 */
async function popOutAndAsk(
  t: TestContext,
  chat: { page: Page; frame: Frame },
  agent: ReaderAgent,
  channelId: string,
  passages: [string, string],
): Promise<void> {
  const tabOpened = chat.page.context().waitForEvent("page");
  await chat.frame.locator("#pop-out", { hasText: "Open in a browser tab" }).click();
  const tab = await tabOpened;
  const tabFrame = await readerFrame(tab);
  const address = new URL(tab.url());
  assert.match(address.pathname, /^\/s\/[A-Za-z0-9_-]{22}\/$/, "the browser host's session");
  assert.equal(address.searchParams.get("k"), null, "the key left the address bar");
  assert.equal(address.hash, `#${channelId}`);
  assert.equal(await tabFrame.locator("#pop-out").isHidden(), true, "a tab does not offer another tab");
  await agent.next("ready", 30_000);
  await agent.send("hello", {});
  await tabFrame.locator("#presence", { hasText: "Agent is listening" }).waitFor();

  for (const [asking, other, passage, question] of [
    [chat.frame, tabFrame, passages[0], `Asked in the chat: what of “${passages[0]}”?`],
    [tabFrame, chat.frame, passages[1], `Asked in the tab: what of “${passages[1]}”?`],
  ] as const) {
    await askAbout(asking, passage, question);
    const { ask } = await agent.nextAsk(30_000);
    assert.equal(ask.question, question);
    const text = `The answer to “${question}”`;
    const [inAsking, inOther] = await Promise.all([watchAnswer(asking, ask.thread_id, text), watchAnswer(other, ask.thread_id, text)]);
    await agent.send("answer", { thread_id: ask.thread_id, text });
    const [askingAt, otherAt] = await Promise.all([inAsking(), inOther()]);
    t.diagnostic(`${question}: the answer showed in the other reader ${otherAt - askingAt} ms after the one it was asked in`);
    assert.ok(Math.abs(askingAt - otherAt) <= SAME_ANSWER_MS, `the answer showed ${Math.abs(askingAt - otherAt)} ms apart in the chat and the tab`);
    // The question with it, in the reader where it was not asked.
    await other.locator(`.card[data-thread="${ask.thread_id}"] .message.user`, { hasText: question }).waitFor({ timeout: SAME_ANSWER_MS });
  }
  await tab.close();
}
