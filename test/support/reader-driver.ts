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
import type { Frame, Locator } from "playwright-core";
import type { AskData } from "../../protocol/reader.js";
import { connectServer, structured } from "./helpers.js";

/** A message of the agent queue. */
export interface AgentMessage {
  seq: number;
  event: string;
  data: Record<string, unknown>;
}

/** The agent: reads the channel's agent queue and answers, from its own server process. */
export class ReaderAgent {
  private readonly inbox: { message: AgentMessage; at: number }[] = [];

  constructor(
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
    return { ask: message.data as unknown as AskData, at };
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

/**
 * Selects `passage` in the document as a user's drag would (scrolled to the middle of the
 * frame when `scroll`), clicks Ask, and waits until a card opened and its textarea is the
 * frame's focused element: what the app controls. Whether the frame itself has the
 * browser's focus (`:focus` matches only then) is the host's and the window manager's
 * business, which a loaded machine or two cross-origin frames make late.
 * @throws Error with what the frame showed (focused element, selection, cards) when no card opened within the frame's timeout.
 */
export async function openCard(frame: Frame, passage: string, options: { scroll?: boolean } = {}): Promise<Locator> {
  await frame.evaluate(
    ({ text, scroll }) => {
      const block = [...document.querySelectorAll<HTMLElement>("#doc [data-block]")].find((element) => element.textContent?.includes(text));
      if (!block) throw new Error(`no block holds ${text}`);
      if (scroll) block.scrollIntoView({ block: "center" });
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
    },
    { text: passage, scroll: options.scroll ?? false },
  );
  // Under load, in MCP Inspector (the reader two cross-origin frames deep), a click
  // Playwright aims at #ask has missed it: no click reached the button, the frame never
  // had the focus, the selection stayed, no card opened. A person would click again; so
  // does this, only while the button has seen no click.
  const ask = frame.locator("#ask");
  let clicks = 0;
  while (clicks < 3) {
    clicks++;
    await ask.evaluate((button) => {
      const page = window as unknown as { __askClicked?: boolean };
      page.__askClicked = false;
      button.addEventListener("click", () => (page.__askClicked = true), { capture: true, once: true });
    });
    await ask.click();
    if (await frame.evaluate(() => (window as unknown as { __askClicked?: boolean }).__askClicked)) break;
    process.stderr.write(`reader driver: click ${clicks} on Ask did not reach the button; clicking again\n`);
  }
  try {
    const focused = await frame.waitForFunction(
      () => {
        const card = document.activeElement?.matches(".card textarea") ? document.activeElement.closest(".card") : null;
        return card ? { index: [...document.querySelectorAll(".card")].indexOf(card) } : null;
      },
      undefined,
      { polling: 50 },
    );
    return frame.locator(".card").nth((await focused.jsonValue())!.index);
  } catch (error) {
    const seen = await frame
      .evaluate(() => ({
        activeElement: document.activeElement ? `${document.activeElement.tagName}.${document.activeElement.className}` : null,
        frameHasFocus: document.hasFocus(),
        cards: document.querySelectorAll(".card").length,
        selection: document.getSelection()?.toString() ?? "",
        askButtonHidden: document.getElementById("ask")?.hidden,
      }))
      .catch((reason: unknown) => String(reason));
    throw new Error(`no card's textarea took the focus after ${clicks} click(s) on Ask: ${JSON.stringify(seen)}`, { cause: error });
  }
}

/** Opens a card on `passage` ({@link openCard}), types `question` and presses Enter. Resolves with the page's time of Enter. */
export async function askAbout(frame: Frame, passage: string, question: string): Promise<number> {
  return submit(await openCard(frame, passage), question);
}

/** Asks `question` again in the card of `threadId`. Resolves with the page's time of Enter. */
export function askFollowUp(frame: Frame, threadId: string, question: string): Promise<number> {
  return submit(frame.locator(`.card[data-thread="${threadId}"]`), question);
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
      delete stamps[key];
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
    const stamp = await frame.waitForFunction((key) => (window as unknown as { __answers: Record<string, number> }).__answers[key], key);
    return (await stamp.jsonValue())!;
  };
}

/** Types `question` into the textarea of `card` and presses Enter; resolves with the page's time of the keydown. */
export async function submit(card: Locator, question: string): Promise<number> {
  const textarea = card.locator("textarea");
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
  return textarea.evaluate(() => (window as unknown as { __enterAt: number }).__enterAt);
}
