/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * The reader in the playground, in Debian's Chromium, with a separate
 * `backchannel serve` process as the agent (driven by the SDK's `Client`, as a model
 * drives it). Shared by the reader's browser suites: each opens its own playground on
 * its own data directory.
 */
import { after, before } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH, connectServer, startPlayground, structured, tempDataDir, type PlaygroundProcess } from "./helpers.js";
import { type AgentMessage, openCard, ReaderAgent, submit, watchAnswer } from "./reader-driver.js";

/** Where and how {@link ReaderRig.open} opens a page. */
export interface OpenOptions {
  /** The page's query, e.g. "?agent=off". */
  query?: string;
  /** A channel id for the URL's hash. */
  hash?: string;
  /** The viewport. Default 1,280 × 900. */
  width?: number;
  height?: number;
  /** How long one wait may take. Default 30,000 ms (Playwright's). */
  timeoutMs?: number;
  /**
   * A script each of the page's documents runs before its own (Playwright's `addInitScript`,
   * which reaches the frames too): to watch what an app does from its first moment, which a
   * call from the test after the page has opened may come too late for. None by default.
   */
  initScript?: () => void;
}

/** A {@link ReaderRig} started before the tests of the enclosing suite and stopped after them. */
export function readerRigForSuite(): ReaderRig {
  const rig = new ReaderRig();
  before(() => rig.start());
  after(() => rig.stop());
  return rig;
}

/** The playground, a browser and an agent on one data directory. */
export class ReaderRig {
  browser!: Browser;
  agent!: Client;
  playground!: PlaygroundProcess;
  /** The data directory the playground and the agent share (removed by {@link stop}). */
  dataDir!: string;
  /** Errors the pages threw, and dialogs they opened. */
  readonly pageErrors: string[] = [];
  private cleanup: (() => Promise<void>) | undefined;

  /**
   * Starts the playground, the agent's server and Chromium. The playground serves
   * `readerHtml` when given (another build of the reader), else `$BACKCHANNEL_READER_HTML`
   * when set (to run a suite against an older reader and see what fails there), else
   * this checkout's.
   */
  async start(options: { readerHtml?: string } = {}): Promise<this> {
    const temp = await tempDataDir();
    this.cleanup = temp.cleanup;
    this.dataDir = temp.dir;
    const readerHtml = options.readerHtml ?? process.env.BACKCHANNEL_READER_HTML;
    this.playground = await startPlayground(temp.dir, readerHtml ? ["--reader-html", readerHtml] : []);
    this.agent = await connectServer(temp.dir);
    this.browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    return this;
  }

  /** Stops everything and removes the data directory. */
  async stop(): Promise<void> {
    await this.browser?.close();
    await this.agent?.close();
    await this.playground?.stop();
    await this.cleanup?.();
  }

  /**
   * A new page on the playground (`query`, e.g. "?agent=off", and `hash`, a channel id),
   * with the given viewport and timeout of each wait; resolves once the reader shows its whole document.
   */
  async open(options: OpenOptions = {}): Promise<ReaderPage> {
    const reader = await this.openPage(options);
    await reader.frame();
    return reader;
  }

  /** A new page on the playground as {@link open} makes it, once it names its channel (the reader may still be loading). */
  async openPage(options: OpenOptions = {}): Promise<ReaderPage> {
    const page = await this.browser.newPage({ viewport: { width: options.width ?? 1280, height: options.height ?? 900 } });
    // Playwright's default, 30 s, unless a slow reader (an old one, in the benchmark) needs more.
    page.setDefaultTimeout(options.timeoutMs ?? 30_000);
    if (options.initScript) await page.addInitScript(options.initScript);
    page.on("pageerror", (error) => this.pageErrors.push(error.message));
    page.on("dialog", (dialog) => {
      this.pageErrors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(this.playground.page(`/${options.query ?? ""}${options.hash ? `#${options.hash}` : ""}`));
    await page.locator("#channel", { hasText: /^ch-/ }).waitFor();
    return new ReaderPage(page, this.agent, (await page.locator("#channel").textContent())!, options.timeoutMs);
  }

  /** Opens `markdown` with `open_reader` as the agent would, on a new channel; returns the channel id. */
  async openDocument(markdown: string, title: string): Promise<string> {
    const opened = structured<{ channel_id: string }>(await this.agent.callTool({ name: "open_reader", arguments: { title, markdown } }));
    return opened.channel_id;
  }
}

/** One playground page and the reader in it. */
export class ReaderPage {
  constructor(
    readonly page: Page,
    readonly agent: Client,
    public channelId: string,
    /** How long one wait may take (the page's default timeout). */
    readonly timeoutMs = 30_000,
  ) {}

  /** The reader's frame (a new one after every re-render), once its whole document is in (no longer `aria-busy`). */
  async frame(): Promise<Frame> {
    // The playground replaces the iframe on a re-render: look again until one has a document.
    const deadline = Date.now() + Math.max(60_000, this.timeoutMs);
    while (Date.now() < deadline) {
      const handle = await this.page.locator("#frame iframe").elementHandle();
      const frame = await handle?.contentFrame();
      // A function, not a locator: a selector such as "#doc:not([aria-busy]) [data-block]" walks every block of a
      // 1 MiB document on each poll, which takes the frame's main thread from the reader it measures.
      const ready = await frame
        ?.waitForFunction(
          () => {
            const doc = document.getElementById("doc");
            return doc !== null && !doc.hasAttribute("aria-busy") && doc.querySelector("[data-block]") !== null;
          },
          undefined,
          { polling: 50, timeout: 2_000 },
        )
        .then(() => true)
        .catch(() => false);
      if (frame && ready && !frame.isDetached()) return frame;
    }
    throw new Error("the playground shows no reader with a document");
  }

  /** Reads the agent queue like a model (read and clear) until a message with `event` arrives. */
  nextMessage(event: string, waitMs = Math.max(20_000, this.timeoutMs)): Promise<{ message: AgentMessage; at: number }> {
    return new ReaderAgent(this.agent, this.channelId).next(event, waitMs);
  }

  /** Sends `event` with `data` to the reader, as the agent. */
  async notify(event: string, data: Record<string, unknown>): Promise<void> {
    await new ReaderAgent(this.agent, this.channelId).send(event, data);
  }

  /** Selects `passage` in the document, as a user's drag would, and clicks the Ask button; resolves once a card's input has the focus. */
  async selectAndAsk(passage: string): Promise<void> {
    await openCard(await this.frame(), passage, { scroll: true });
  }

  /** Types `question` into the focused card and presses Enter; resolves with the page-side time of the key. */
  async submit(question: string): Promise<number> {
    return submit((await this.frame()).locator(".card:has(textarea:focus)"), question);
  }

  /** Sends `text` as the answer to `threadId`; resolves with the ms from just before notify_ui to `shown` in the card's DOM. */
  async answer(threadId: string, text: string, shown: string): Promise<number> {
    const shownAt = await watchAnswer(await this.frame(), threadId, shown);
    const sentAt = Date.now();
    await this.notify("answer", { thread_id: threadId, text });
    return (await shownAt()) - sentAt;
  }
}

/** The median of `values`. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
}
