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
import type { Client } from "@modelcontextprotocol/client";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import {
  browserSkipReason,
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  connectServer,
  startPlayground,
  structured,
  tempDataDir,
  type PlaygroundProcess,
} from "./support/helpers.js";

interface Message {
  seq: number;
  event: string;
  data: Record<string, unknown>;
}

/** Markup that runs code if it ever reaches the DOM unescaped: the image fails to load (the CSP allows no image), so onerror fires. */
const XSS_QUESTION = `<img src=x onerror="window.__pwned='question-img'"><script>window.__pwned='question-script'</script> is this safe?`;
const XSS_ANSWER = `Yes: <img src=x onerror="window.__pwned='answer-img'"> and <script>window.__pwned='answer-script'</script> stay text.`;

const skip = browserSkipReason();

describe("the reader in a real browser", { skip, timeout: 120_000 }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let playground: PlaygroundProcess;
  let browser: Browser;
  let page: Page;
  let agent: Client;
  let channelId: string;
  const timings: Record<string, number[]> = { askToAgent: [], answerToScreen: [] };
  const pageErrors: string[] = [];

  /** Reads the agent queue like a model (read and clear), waiting until a message with `event` arrives. */
  async function nextMessage(event: string, waitMs = 20_000): Promise<{ message: Message; at: number }> {
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      const { messages } = structured<{ messages: Message[] }>(
        await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId, wait_ms: Math.max(1, deadline - Date.now()) } }),
      );
      const at = Date.now();
      const found = messages.find((message) => message.event === event);
      if (found) return { message: found, at };
    }
    throw new Error(`no ${event} reached the agent within ${waitMs} ms`);
  }

  /** The reader's frame (a new one after every re-render). */
  async function readerFrame(): Promise<Frame> {
    const handle = await page.locator("#frame iframe").elementHandle();
    const frame = await handle?.contentFrame();
    if (!frame) throw new Error("the playground shows no reader iframe");
    await frame.locator("#doc p").first().waitFor();
    return frame;
  }

  /** Selects `passage` in the document, as a user's drag would, and clicks the floating Ask button. */
  async function selectAndClickAsk(frame: Frame, passage: string): Promise<void> {
    await frame.evaluate((text) => {
      const block = [...document.querySelectorAll<HTMLElement>("#doc [data-block]")].find((element) => element.textContent?.includes(text));
      if (!block) throw new Error(`no block holds ${text}`);
      const start = block.textContent!.indexOf(text);
      const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      let position = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const length = (node as Text).data.length;
        if (position <= start && start < position + length) range.setStart(node, start - position);
        if (position < start + text.length && start + text.length <= position + length) range.setEnd(node, start + text.length - position);
        position += length;
      }
      const selection = document.getSelection()!;
      selection.removeAllRanges();
      selection.addRange(range);
    }, passage);
    await frame.locator("#ask").click();
  }

  /** Types `question` into the focused card of `frame` and submits it; resolves with the page-side submit time. */
  async function submitQuestion(frame: Frame, card: string, question: string): Promise<number> {
    await frame.evaluate(() => {
      const stamps = window as unknown as { __submittedAt?: number };
      stamps.__submittedAt = undefined;
      const stamp = (event: KeyboardEvent) => {
        if (event.key === "Enter") stamps.__submittedAt ??= Date.now();
      };
      document.addEventListener("keydown", stamp, { capture: true });
    });
    await frame.locator(`${card} textarea`).fill(question);
    await frame.locator(`${card} textarea`).press("Enter");
    return frame.evaluate(() => (window as unknown as { __submittedAt: number }).__submittedAt);
  }

  /** Sends `text` as the answer to `threadId` and resolves with the ms until it showed in the card. */
  async function answer(frame: Frame, threadId: string, text: string, shown: string): Promise<number> {
    await frame.evaluate(
      ({ threadId, shown }) => {
        const stamps = window as unknown as { __answeredAt?: number };
        stamps.__answeredAt = undefined;
        const observer = new MutationObserver(() => {
          const messages = document.querySelectorAll(`.card[data-thread="${threadId}"] .message.agent`);
          if ([...messages].some((message) => message.textContent?.includes(shown))) {
            stamps.__answeredAt = Date.now();
            observer.disconnect();
          }
        });
        observer.observe(document.body, { subtree: true, childList: true, characterData: true });
      },
      { threadId, shown },
    );
    const sentAt = Date.now();
    structured(
      await agent.callTool({ name: "notify_ui", arguments: { channel_id: channelId, event: "answer", data: { thread_id: threadId, text } } }),
    );
    await frame.locator(`.card[data-thread="${threadId}"] .message.agent`, { hasText: shown }).waitFor();
    const answeredAt = await frame.evaluate(() => (window as unknown as { __answeredAt: number }).__answeredAt);
    return answeredAt - sentAt;
  }

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    playground = await startPlayground(dataDir);
    agent = await connectServer(dataDir);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("dialog", (dialog) => {
      pageErrors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(playground.page("/?agent=off"));
    await page.locator("#channel", { hasText: /^ch-/ }).waitFor();
    channelId = (await page.locator("#channel").textContent())!;
  });

  after(async () => {
    await browser?.close();
    await agent?.close();
    await playground?.stop();
    await cleanup?.();
    if (timings.askToAgent!.length > 0) {
      const median = (values: number[]) => {
        const sorted = [...values].sort((a, b) => a - b);
        const middle = sorted.length / 2;
        return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
      };
      const show = (values: number[]) => `${values.join(", ")} ms (median ${median(values)} ms)`;
      process.stderr.write(
        `\nreader e2e timings: Ask → ask at the agent: ${show(timings.askToAgent!)}; notify_ui → answer on screen: ${show(timings.answerToScreen!)}\n`,
      );
    }
  });

  let firstThread = "";
  let secondThread = "";

  test("the reader loads, says ready, and shows that the agent listens after hello", async () => {
    const frame = await readerFrame();
    assert.equal(await frame.locator("#title").textContent(), "How backchannel works");
    assert.ok((await frame.locator("#toc a").count()) >= 3, "a table of contents for the headings");
    await nextMessage("ready");
    structured(await agent.callTool({ name: "notify_ui", arguments: { channel_id: channelId, event: "hello", data: {} } }));
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
  });

  test("status replaces the previous one and disappears at its until", async () => {
    const frame = await readerFrame();
    const status = (data: Record<string, unknown>) =>
      agent.callTool({ name: "notify_ui", arguments: { channel_id: channelId, event: "status", data } });
    structured(await status({ text: "Reading section 1…" }));
    await frame.locator("#status", { hasText: "Reading section 1…" }).waitFor();
    structured(await status({ text: "Reading <b>section 2</b>…", until: new Date(Date.now() + 1_500).toISOString() }));
    await frame.locator("#status", { hasText: "Reading <b>section 2</b>…" }).waitFor();
    assert.equal(await frame.locator("#status b").count(), 0, "status text stays text");
    await frame.waitForFunction(() => document.getElementById("status")?.textContent === "", undefined, { timeout: 5_000 });
  });

  test("the session's wall shows in the status bar while it lasts, and goes at its end", async () => {
    const frame = await readerFrame();
    // The playground opened the channel; the agent's server is another process. Both
    // are children of this test process, so both fall back to the same session key.
    const wall = structured<{ until: string }>(
      await agent.callTool({ name: "post_wall", arguments: { text: "Reviewing <i>chapter 2</i>, back soon", duration_s: 3 } }),
    );
    await frame.locator("#wall", { hasText: "Reviewing <i>chapter 2</i>, back soon" }).waitFor();
    assert.equal(await frame.locator("#wall i").count(), 0, "wall text stays text");
    await frame.waitForFunction(() => document.getElementById("wall")?.textContent === "", undefined, { timeout: 10_000 });
    assert.ok(Date.now() >= Date.parse(wall.until) - 1000, "it went at its end, not before");
  });

  test("select → Ask → question: the agent gets the ask with quote, paragraph and question; the answer shows in that card", async () => {
    const frame = await readerFrame();
    await selectAndClickAsk(frame, "sequence number");
    const card = ".card:has(textarea:focus)";
    await frame.locator(card).waitFor();
    const asked = nextMessage("ask");
    const submittedAt = await submitQuestion(frame, card, "What is a sequence number for?");
    const { message, at } = await asked;
    timings.askToAgent!.push(at - submittedAt);
    assert.equal(message.data.quote, "sequence number");
    assert.equal(message.data.question, "What is a sequence number for?");
    assert.match(String(message.data.paragraph), /^A message carries a sequence number that grows by one/);
    assert.deepEqual(message.data.history, []);
    firstThread = String(message.data.thread_id);
    await frame.locator(`.card[data-thread="${firstThread}"] .card-note`, { hasText: "Waiting for the agent" }).waitFor();
    assert.equal(await frame.locator(`mark[data-thread="${firstThread}"]`).textContent(), "sequence number", "the passage is highlighted");

    timings.answerToScreen!.push(await answer(frame, firstThread, "It orders the messages and is **never reused**.", "It orders the messages"));
    assert.equal(
      await frame.locator(`.card[data-thread="${firstThread}"] .message.agent strong`).textContent(),
      "never reused",
      "markdown is rendered",
    );
    assert.equal(await frame.locator(`.card[data-thread="${firstThread}"] .card-note`).isHidden(), true, "no longer waiting");
  });

  test("a follow-up in the same card carries the thread's history", async () => {
    const frame = await readerFrame();
    const card = `.card[data-thread="${firstThread}"]`;
    const asked = nextMessage("ask");
    const submittedAt = await submitQuestion(frame, card, "Why is it never reused?");
    const { message, at } = await asked;
    timings.askToAgent!.push(at - submittedAt);
    assert.equal(message.data.thread_id, firstThread);
    assert.equal(message.data.quote, "sequence number");
    assert.deepEqual(message.data.history, [
      { role: "user", text: "What is a sequence number for?" },
      { role: "agent", text: "It orders the messages and is **never reused**." },
    ]);
    timings.answerToScreen!.push(await answer(frame, firstThread, "So that a cursor stays valid after the queue drains.", "cursor stays valid"));
  });

  test("markup in a question and an answer renders as text and runs nothing", async () => {
    const frame = await readerFrame();
    await selectAndClickAsk(frame, "a small command that exits");
    const card = ".card:has(textarea:focus)";
    await frame.locator(card).waitFor();
    const asked = nextMessage("ask");
    const submittedAt = await submitQuestion(frame, card, XSS_QUESTION);
    const { message, at } = await asked;
    timings.askToAgent!.push(at - submittedAt);
    assert.equal(message.data.question, XSS_QUESTION, "the agent gets the question exactly as typed");
    secondThread = String(message.data.thread_id);
    timings.answerToScreen!.push(await answer(frame, secondThread, XSS_ANSWER, "stay text"));

    const thread = frame.locator(`.card[data-thread="${secondThread}"]`);
    assert.equal(await thread.locator(".message.user").textContent(), XSS_QUESTION);
    assert.match((await thread.locator(".message.agent").textContent()) ?? "", /Yes: <img src=x onerror="window.__pwned='answer-img'"> and <script>/);
    assert.equal(await frame.locator("#doc img, .card img, .card script").count(), 0, "no element was created from the markup");
    assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined, "no handler or script ran");
  });

  test("a re-render (the host reloads the iframe) restores the document and both threads", async () => {
    await page.locator("#rerender").click();
    await nextMessage("ready");
    const frame = await readerFrame();
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
    const frame = await readerFrame();
    const colours = () => frame.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    assert.deepEqual(await colours(), ["rgb(255, 255, 255)", "rgb(24, 24, 27)"], "the light palette the host sent");
    await page.locator("#theme").click();
    await frame.waitForFunction(() => getComputedStyle(document.body).backgroundColor !== "rgb(255, 255, 255)");
    assert.deepEqual(await colours(), ["rgb(27, 27, 31)", "rgb(236, 236, 241)"], "the dark palette the host sent");
    assert.equal(await frame.evaluate(() => document.documentElement.dataset.theme), "dark");
  });

  test("nothing failed in the page", () => {
    assert.deepEqual(pageErrors, []);
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
