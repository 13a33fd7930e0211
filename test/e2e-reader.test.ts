/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * The reader end to end, in a real browser: Debian's Chromium (headless) shows the
 * playground, a real MCP Apps host (AppBridge + the SDK's Client over Streamable HTTP
 * to the real server), with its agent panel off. The agent is a separate
 * `backchannel serve` process on the same data directory, driven by the SDK's Client,
 * as a model would drive it.
 *
 * Nothing is mocked. Timings are taken with Date.now() on both sides (one machine, one
 * clock): from the moment the question is submitted to the moment the agent's poll
 * returns the ask, and from just before notify_ui to the moment the answer's text is
 * in the card's DOM (a MutationObserver in the iframe stamps it).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromium, type Browser } from "playwright-core";
import {
  browserSkipReason,
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  startPlayground,
  structured,
  tempDataDir,
  type PlaygroundProcess,
} from "./support/helpers.js";
import { askFollowUp } from "./support/reader-driver.js";
import { median, readerRigForSuite, type ReaderPage } from "./support/reader-page.js";

/** Markup that runs code if it ever reaches the DOM unescaped: the image fails to load (the CSP allows no image), so onerror fires. */
const XSS_QUESTION = `<img src=x onerror="window.__pwned='question-img'"><script>window.__pwned='question-script'</script> is this safe?`;
const XSS_ANSWER = `Yes: <img src=x onerror="window.__pwned='answer-img'"> and <script>window.__pwned='answer-script'</script> stay text.`;

const skip = browserSkipReason();

describe("the reader in a real browser", { skip, timeout: 120_000 }, () => {
  const rig = readerRigForSuite();
  let reader: ReaderPage;
  const timings: Record<string, number[]> = { askToAgent: [], answerToScreen: [] };

  before(async () => {
    reader = await rig.open({ query: "?agent=off" });
  });

  after(() => {
    if (timings.askToAgent!.length === 0) return;
    const show = (values: number[]) => `${values.join(", ")} ms (median ${median(values)} ms)`;
    process.stderr.write(
      `\nreader e2e timings: Ask → ask at the agent: ${show(timings.askToAgent!)}; notify_ui → answer on screen: ${show(timings.answerToScreen!)}\n`,
    );
  });

  let firstThread = "";
  let secondThread = "";

  test("the reader loads, says ready, and shows that the agent listens after hello", async () => {
    const frame = await reader.frame();
    assert.equal(await frame.locator("#title").textContent(), "How backchannel works");
    assert.ok((await frame.locator("#toc a").count()) >= 3, "a table of contents for the headings");
    await reader.nextMessage("ready");
    await reader.notify("hello", {});
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
  });

  test("status replaces the previous one and disappears at its until", async () => {
    const frame = await reader.frame();
    const status = (data: Record<string, unknown>) => reader.notify("status", data);
    await status({ text: "Reading section 1…" });
    await frame.locator("#status", { hasText: "Reading section 1…" }).waitFor();
    await status({ text: "Reading <b>section 2</b>…", until: new Date(Date.now() + 1_500).toISOString() });
    await frame.locator("#status", { hasText: "Reading <b>section 2</b>…" }).waitFor();
    assert.equal(await frame.locator("#status b").count(), 0, "status text stays text");
    await frame.waitForFunction(() => document.getElementById("status")?.textContent === "", undefined, { timeout: 5_000 });
  });

  test("the session's wall shows in the status bar while it lasts, and goes at its end", async () => {
    const frame = await reader.frame();
    // The playground opened the channel; the agent's server is another process. Both
    // are children of this test process, so both fall back to the same session key.
    const wall = structured<{ until: string }>(
      await rig.agent.callTool({ name: "post_wall", arguments: { text: "Reviewing <i>chapter 2</i>, back soon", duration_s: 3 } }),
    );
    await frame.locator("#wall", { hasText: "Reviewing <i>chapter 2</i>, back soon" }).waitFor();
    assert.equal(await frame.locator("#wall i").count(), 0, "wall text stays text");
    await frame.waitForFunction(() => document.getElementById("wall")?.textContent === "", undefined, { timeout: 10_000 });
    assert.ok(Date.now() >= Date.parse(wall.until) - 1000, "it went at its end, not before");
  });

  test("select → Ask → question: the agent gets the ask with quote, paragraph and question; the answer shows in that card", async () => {
    const frame = await reader.frame();
    await reader.selectAndAsk("sequence number");
    const asked = reader.nextMessage("ask");
    const submittedAt = await reader.submit("What is a sequence number for?");
    const { message, at } = await asked;
    timings.askToAgent!.push(at - submittedAt);
    assert.equal(message.data.quote, "sequence number");
    assert.equal(message.data.question, "What is a sequence number for?");
    assert.match(String(message.data.paragraph), /^A message carries a sequence number that grows by one/);
    assert.deepEqual(message.data.history, []);
    firstThread = String(message.data.thread_id);
    await frame.locator(`.card[data-thread="${firstThread}"] .card-note`, { hasText: "Waiting for the agent" }).waitFor();
    assert.equal(await frame.locator(`mark[data-thread="${firstThread}"]`).textContent(), "sequence number", "the passage is highlighted");

    timings.answerToScreen!.push(await reader.answer(firstThread, "It orders the messages and is **never reused**.", "It orders the messages"));
    assert.equal(
      await frame.locator(`.card[data-thread="${firstThread}"] .message.agent strong`).textContent(),
      "never reused",
      "markdown is rendered",
    );
    assert.equal(await frame.locator(`.card[data-thread="${firstThread}"] .card-note`).isHidden(), true, "no longer waiting");
  });

  test("a follow-up in the same card carries the thread's history", async () => {
    const frame = await reader.frame();
    const asked = reader.nextMessage("ask");
    const submittedAt = await askFollowUp(frame, firstThread, "Why is it never reused?");
    const { message, at } = await asked;
    timings.askToAgent!.push(at - submittedAt);
    assert.equal(message.data.thread_id, firstThread);
    assert.equal(message.data.quote, "sequence number");
    assert.deepEqual(message.data.history, [
      { role: "user", text: "What is a sequence number for?" },
      { role: "agent", text: "It orders the messages and is **never reused**." },
    ]);
    timings.answerToScreen!.push(await reader.answer(firstThread, "So that a cursor stays valid after the queue drains.", "cursor stays valid"));
  });

  test("markup in a question and an answer renders as text and runs nothing", async () => {
    const frame = await reader.frame();
    await reader.selectAndAsk("a small command that exits");
    const asked = reader.nextMessage("ask");
    const submittedAt = await reader.submit(XSS_QUESTION);
    const { message, at } = await asked;
    timings.askToAgent!.push(at - submittedAt);
    assert.equal(message.data.question, XSS_QUESTION, "the agent gets the question exactly as typed");
    secondThread = String(message.data.thread_id);
    timings.answerToScreen!.push(await reader.answer(secondThread, XSS_ANSWER, "stay text"));

    const thread = frame.locator(`.card[data-thread="${secondThread}"]`);
    assert.equal(await thread.locator(".message.user").textContent(), XSS_QUESTION);
    assert.match((await thread.locator(".message.agent").textContent()) ?? "", /Yes: <img src=x onerror="window.__pwned='answer-img'"> and <script>/);
    assert.equal(await frame.locator("#doc img, .card img, .card script").count(), 0, "no element was created from the markup");
    assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined, "no handler or script ran");
  });

  test("a re-render (the host reloads the iframe) restores the document and both threads", async () => {
    await reader.page.locator("#rerender").click();
    await reader.nextMessage("ready");
    const frame = await reader.frame();
    await frame.locator(".card").nth(1).waitFor();
    assert.equal(await frame.locator(".card").count(), 2);
    // Each message's text: a question's, an answer's (without its Show more, when a compact card cuts it short).
    const texts = async (selector: string) =>
      (await frame.locator(`${selector} .message.user, ${selector} .message-text`).allTextContents()).map((text) => text.trim());
    assert.deepEqual(await texts(`.card[data-thread="${firstThread}"]`), [
      "What is a sequence number for?",
      "It orders the messages and is never reused.",
      "Why is it never reused?",
      "So that a cursor stays valid after the queue drains.",
    ]);
    assert.deepEqual(await texts(`.card[data-thread="${secondThread}"]`), [XSS_QUESTION, XSS_ANSWER]);
    assert.equal(await frame.locator(`mark[data-thread="${firstThread}"]`).textContent(), "sequence number");
    assert.equal(await frame.locator(`mark[data-thread="${secondThread}"]`).textContent(), "a small command that exits");
    assert.equal(await frame.locator(".card img, .card script").count(), 0);
    assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
  });

  test("a host theme change recolours the reader", async () => {
    const frame = await reader.frame();
    const colours = () => frame.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    assert.deepEqual(await colours(), ["rgb(255, 255, 255)", "rgb(24, 24, 27)"], "the light palette the host sent");
    await reader.page.locator("#theme").click();
    await frame.waitForFunction(() => getComputedStyle(document.body).backgroundColor !== "rgb(255, 255, 255)");
    assert.deepEqual(await colours(), ["rgb(27, 27, 31)", "rgb(236, 236, 241)"], "the dark palette the host sent");
    assert.equal(await frame.evaluate(() => document.documentElement.dataset.theme), "dark");
  });

  test("nothing failed in the page", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});

describe("the playground's agent panel, on a narrow screen", { skip, timeout: 60_000 }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let playground: PlaygroundProcess;
  let browser: Browser;

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    playground = await startPlayground(dataDir);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await playground?.stop();
    await cleanup?.();
  });

  test("a person answers in the panel (through notify_ui); the card sits under its paragraph", async () => {
    const page = await browser.newPage({ viewport: { width: 640, height: 900 } });
    await page.goto(playground.page("/"));
    const frame = await (await page.locator("#frame iframe").elementHandle())!.contentFrame();
    assert.ok(frame);
    // The panel greets a ready reader with hello, as an agent would.
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await frame.evaluate(() => {
      const paragraph = [...document.querySelectorAll("#doc p")].find((element) => element.textContent?.startsWith("A message carries"))!;
      const text = paragraph.firstChild!;
      const range = document.createRange();
      range.setStart(text, 2);
      range.setEnd(text, 9);
      document.getSelection()!.removeAllRanges();
      document.getSelection()!.addRange(range);
    });
    await frame.locator("#ask").click();
    await frame.locator(".card textarea").fill("Which message?");
    await frame.locator(".card textarea").press("Enter");

    const ask = page.locator("#inbox li", { hasText: "Which message?" });
    await ask.waitFor();
    assert.equal(await ask.locator("blockquote").textContent(), "message");
    await ask.locator("textarea").fill("Any message in a *queue*.");
    await ask.locator("button[type=submit]").click();

    await frame.locator(".card .message.agent", { hasText: "Any message in a queue." }).waitFor();
    assert.equal(await frame.locator(".card .message.agent em").textContent(), "queue");
    assert.equal(await frame.locator("#layout").getAttribute("class"), "narrow");
    assert.equal(
      await frame.evaluate(() => document.querySelector(".card")?.previousElementSibling?.textContent?.startsWith("A message carries")),
      true,
      "the card follows its paragraph",
    );
    await page.close();
  });
});
