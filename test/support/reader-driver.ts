/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * Drives the reader from both sides, in any host: the person in the reader's frame
 * (select a passage, ask, ask again in the same card, see the answer), and the agent
 * as an SDK client of its own `backchannel serve` process on the same data directory.
 *
 * Times are `Date.now()` on both sides (one machine, one clock): the page stamps the
 * Enter key and the moment an answer's text is in the card (a MutationObserver).
 */
import type { Client } from "@modelcontextprotocol/client";
import type { Frame } from "playwright-core";
import type { AskData } from "../../protocol/reader.js";
import { connectServer, structured } from "./helpers.js";

/** A message of the agent queue. */
export interface AgentMessage {
  seq: number;
  event: string;
  data: unknown;
}

/** The agent: reads the channel's agent queue and answers, from its own server process. */
export class ReaderAgent {
  private readonly inbox: { message: AgentMessage; at: number }[] = [];

  private constructor(
    /** The agent's SDK client. */
    readonly client: Client,
    private readonly channelId: string,
  ) {}

  /** Starts the agent's server process on `dataDir` and connects to it. */
  static async start(dataDir: string, channelId: string): Promise<ReaderAgent> {
    return new ReaderAgent(await connectServer(dataDir), channelId);
  }

  /**
   * The next message with `event` (earlier messages of other events are dropped), and
   * `Date.now()` when the poll that read it returned.
   * @throws Error when none arrives within `waitMs` (default 20,000).
   */
  async next(event: string, waitMs = 20_000): Promise<{ message: AgentMessage; at: number }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = this.inbox.findIndex((entry) => entry.message.event === event);
      if (found >= 0) return this.inbox.splice(0, found + 1).at(-1)!;
      this.inbox.length = 0;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${event} reached the agent within ${waitMs} ms`);
      const { messages } = structured<{ messages: AgentMessage[] }>(
        await this.client.callTool({ name: "poll_agent_messages", arguments: { channel_id: this.channelId, wait_ms: left } }),
      );
      const at = Date.now();
      this.inbox.push(...messages.map((message) => ({ message, at })));
    }
  }

  /** The next `ask`, with its data. */
  async nextAsk(waitMs?: number): Promise<{ ask: AskData; at: number }> {
    const { message, at } = await this.next("ask", waitMs);
    return { ask: message.data as AskData, at };
  }

  /** Sends `event` to the reader; resolves with `Date.now()` just before the call. */
  async send(event: string, data: unknown): Promise<number> {
    const sentAt = Date.now();
    structured(await this.client.callTool({ name: "notify_ui", arguments: { channel_id: this.channelId, event, data } }));
    return sentAt;
  }

  /** Stops the agent's server process. */
  close(): Promise<void> {
    return this.client.close();
  }
}

/** Selects `passage` in the document as a drag would, clicks Ask, types `question` and presses Enter. Resolves with the page's time of Enter. */
export async function askAbout(frame: Frame, passage: string, question: string): Promise<number> {
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
  return submit(frame, ".card:has(textarea:focus)", question);
}

/** Asks `question` again in the card of `threadId`. Resolves with the page's time of Enter. */
export function askFollowUp(frame: Frame, threadId: string, question: string): Promise<number> {
  return submit(frame, `.card[data-thread="${threadId}"]`, question);
}

/**
 * Starts watching the card of `threadId` for an agent message containing `text`.
 * @returns a function that resolves with the page's time the text appeared, once it has.
 */
export async function watchAnswer(frame: Frame, threadId: string, text: string): Promise<() => Promise<number>> {
  const key = `${threadId}\n${text}`;
  await frame.evaluate(
    ({ threadId, text, key }) => {
      const page = window as unknown as { __answers?: Record<string, number> };
      page.__answers ??= {};
      const stamps = page.__answers;
      const seen = () =>
        [...document.querySelectorAll(`.card[data-thread="${threadId}"] .message.agent`)].some((message) => message.textContent?.includes(text));
      const observer = new MutationObserver(() => {
        if (!seen()) return;
        stamps[key] = Date.now();
        observer.disconnect();
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    },
    { threadId, text, key },
  );
  return async () => {
    await frame.locator(`.card[data-thread="${threadId}"] .message.agent`, { hasText: text }).waitFor();
    return frame.evaluate((key) => (window as unknown as { __answers: Record<string, number> }).__answers[key]!, key);
  };
}

/** Types `question` into the textarea of `card` and presses Enter; resolves with the page's time of the keydown. */
async function submit(frame: Frame, card: string, question: string): Promise<number> {
  const textarea = frame.locator(`${card} textarea`);
  await textarea.fill(question);
  await textarea.evaluate((element) => {
    element.addEventListener(
      "keydown",
      (event) => {
        if ((event as KeyboardEvent).key === "Enter") (window as unknown as { __enterAt?: number }).__enterAt = Date.now();
      },
      { capture: true, once: true },
    );
  });
  await textarea.press("Enter");
  return frame.evaluate(() => (window as unknown as { __enterAt: number }).__enterAt);
}
