/**
 * The reader, an MCP App. Order of events:
 * 1. register the host handlers, then `await app.connect()` (hosts keep the iframe
 *    hidden until the handshake is done);
 * 2. the host delivers `open_reader`'s result, which names the channel;
 * 3. the reader restores the document and every thread through the app-only
 *    `reader_state` (also after a re-render), starts receiving, then sends `ready`.
 *
 * This file wires the parts together; each job has its module: document rendering
 * (document.ts, toc.ts), the keyboard route (keyboard.ts), the Ask button
 * (ask-button.ts), snapping a selection to whole words (word-snap.ts), the threads
 * (thread-list.ts), their cards (threads.ts) and places
 * (layout.ts), the reading position (reading-position.ts), fitting an ask into the message limit (protocol/ask-budget.ts), the state tools
 * (reader-server.ts), presence and the no-agent offer or doorbell (presence.ts,
 * chat-message.ts, chat-delivery.ts), the browser tab beside the chat (pop-out.ts),
 * the host's frame (viewport.ts), the agent's ambient lines (status-line.ts) and what
 * a person reads (wording.ts).
 */
import { App } from "@modelcontextprotocol/ext-apps";
import { AHEAD_STATE_ELEMENT, type AheadReaderState, type AnswerData, type StatusData } from "../protocol/reader.js";
import { AskButton } from "./ask-button.js";
import { AppChannel, textOf } from "./channel.js";
import { chatDelivery } from "./chat-delivery.js";
import { adoptDocument, anchorOf, blockOf, renderDocument, sentencesOf } from "./document.js";
import { BlockKeys } from "./keyboard.js";
import { PopOut } from "./pop-out.js";
import { Presence } from "./presence.js";
import { ReaderServer, type RestoredState } from "./reader-server.js";
import { ReadingPosition } from "./reading-position.js";
import { StatusLine } from "./status-line.js";
import { ThreadList } from "./thread-list.js";
import { renderToc, renderTocSummary } from "./toc.js";
import { Viewport } from "./viewport.js";
import { snapSelectionToWords } from "./word-snap.js";
import { askLabel, notLoaded } from "./wording.js";
import "./style.css";

// Where a load's time goes, for the long-document benchmark (bench/suites/reader-long.ts):
// the script starts, the host's handshake is done, the tool result names the channel, its
// state has come, the first screen is in the DOM, the whole document and its threads are;
// `reader:ahead` when the browser host put the state and document in this frame.
performance.mark("reader:script");
const elements = {
  title: byId("title"),
  presence: byId("presence"),
  waitingCount: byId("waiting-count"),
  status: byId("status"),
  wall: byId("wall"),
  offer: byId("offer"),
  offerText: byId("offer-text"),
  offerButton: byId("offer-button") as HTMLButtonElement,
  fullscreen: byId("fullscreen") as HTMLButtonElement,
  popOut: byId("pop-out") as HTMLButtonElement,
  keysHelp: byId("keys") as HTMLDetailsElement,
  skip: byId("skip"),
  notice: byId("notice"),
  toc: byId("toc") as HTMLDetailsElement,
  layout: byId("layout"),
  doc: byId("doc"),
  margin: byId("margin"),
  ask: byId("ask") as HTMLButtonElement,
};

const app = new App({ name: "backchannel-reader", version: "0.1.0" }, {}, { autoResize: true });
const server = new ReaderServer(app);
const viewport = new Viewport(app, elements.fullscreen);
const statusLine = new StatusLine(elements.status, elements.wall);
const askButton = new AskButton(elements.ask, elements.layout, elements.doc);
const position = new ReadingPosition(byId("scroller"), (block) => server.savePosition(block));
const popOut = new PopOut(app, elements.popOut, (text) => showNotice(text));
let channel: AppChannel | undefined;
/** While a document is being rendered, the question asked meanwhile (the latest), started once its threads are restored. */
let building: { ask?: () => void } | undefined;

const threads: ThreadList = new ThreadList(app, server, elements, {
  onconnection: (ok) => presence.setOffline(!ok),
  onchange: (heard) => (heard ? presence.heard() : presence.update()),
  onfocusdocument: () => keys.focusCurrent(),
});

const presence = new Presence(elements, {
  chat: () => chatDelivery(app),
  sendToChat: () => threads.sendToChat(chatDelivery(app)),
  waiting: () => threads.waiting(),
});

const keys = new BlockKeys(elements.doc, {
  ask: (block, range) => {
    askButton.hide();
    whenReady(() => threads.start(block, range));
  },
  openThread: (threadId) => threads.open(threadId),
  onfocusblock: (block, sentence) => {
    if (block) askButton.show(block.getBoundingClientRect(), sentence ? "Ask about this sentence (Enter)" : "Ask about this (Enter)");
    else if (!selectedRange()) askButton.hide();
  },
});

app.onhostcontextchanged = (context) => viewport.apply(context);
app.ontoolresult = (result) => {
  if (result.isError) return showNotice(textOf(result.content) || "The agent could not open the document.");
  const id = (result.structuredContent as { channel_id?: unknown } | undefined)?.channel_id;
  if (typeof id === "string" && id !== server.channelId) void open(id);
};
app.onteardown = async () => {
  channel?.stop();
  return {};
};

const connected = app.connect().then(() => {
  performance.mark("reader:connected");
  viewport.apply(app.getHostContext() ?? {});
});
// In the browser host's frame the channel's state and document are here already: the
// reader shows them while it connects, and receives once connected.
const ahead = aheadState();
if (ahead) {
  performance.mark("reader:ahead");
  void open(ahead.channel_id, ahead);
}
await connected;
if (!ahead) showNotice("Loading the document…");

/**
 * Restores the document and threads of `id` (from `ahead`, the state the browser host put
 * in this frame, else from the server), starts receiving once connected, and tells the
 * agent the reader is ready.
 */
async function open(id: string, ahead?: AheadReaderState): Promise<void> {
  performance.mark("reader:open");
  server.channelId = id;
  popOut.channelId = id;
  channel?.stop();
  position.stop();
  let state: RestoredState | AheadReaderState;
  try {
    state = ahead ?? (await server.readState());
    performance.mark("reader:state");
  } catch (error) {
    return showNotice(notLoaded(error));
  }
  if (!state.document) return showNotice("There is no document here any more. Ask the agent to open it again.");
  if (Number.isSafeInteger(state.max_message_bytes) && state.max_message_bytes > 0) threads.maxMessageBytes = state.max_message_bytes;
  showNotice(null);
  popOut.offer(state.browser_tab);
  threads.title = state.document.title;
  elements.title.textContent = state.document.title;
  document.title = state.document.title;
  // The first screen now; the rest of a long document, its threads and receiving once
  // every chunk is in. A question asked meanwhile waits for that (see `whenReady`).
  const rendered = "text" in state.document ? renderDocument(elements.doc, state.document) : adoptDocument(elements.doc);
  keys.reset(rendered.blocks);
  if (!rendered.whole) renderTocSummary(elements.toc);
  performance.mark("reader:first-screen");
  const current: { ask?: () => void } = {};
  building = current;
  if (!(await rendered.done)) return;
  renderToc(elements.toc, rendered.headings);
  threads.reset(rendered.blocks, state.threads, state.drafts);
  // A server from before reading positions sends none.
  position.reset(rendered.blocks, state.position ?? null);
  building = undefined;
  performance.mark("reader:document");
  current.ask?.();

  await connected;
  channel = new AppChannel(app, { channelId: id });
  threads.channel = channel;
  channel.onstatechange = (state) => {
    if (state === "retrying") presence.setOffline(true);
    else if (state === "live") presence.setOffline(false);
  };
  channel.onwall = (wall) => statusLine.showWall(wall);
  // Answers deleted before this reader read them (away for minutes while another reader of the channel read them) are in the threads the server keeps.
  channel.onmissed = () => void threads.resync();
  channel.on("hello", () => presence.hello());
  channel.on("status", (data) => {
    presence.heard();
    statusLine.showStatus(data as StatusData);
  });
  channel.on("answer", (data, message) => void threads.receive(data as AnswerData, `ui:${message.seq}`));
  channel.start();
  presence.start();
  // The plugin's hook wakes the agent for every message of this channel: it listens already.
  if (state.document.woken_by === "hook") presence.hello();
  await channel.send("ready", {}).then(
    () => presence.setOffline(false),
    (error: Error) => {
      console.warn("backchannel reader: ready was not sent:", error);
      presence.setOffline(true);
    },
  );
}

/** The selection when it is a non-empty range that starts in a block of the document. */
function selectedRange(): Range | null {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
  const range = selection.getRangeAt(0);
  return elements.doc.contains(range.startContainer) && blockOf(range.startContainer) ? range : null;
}

/** True when `range` is exactly one sentence of its block (what ← → select). */
function wholeSentence(range: Range): boolean {
  const anchor = anchorOf(range);
  const block = blockOf(range.startContainer);
  if (!anchor || !block) return false;
  return sentencesOf(block.textContent ?? "").some(([start, end]) => start === anchor.start && end === anchor.end);
}

/** Asks about the selection, else about the block that has the focus. */
function askFromButton(): void {
  const range = selectedRange();
  const block = range ? blockOf(range.startContainer) : blockOf(document.activeElement);
  askButton.hide();
  if (block) whenReady(() => threads.start(block, range));
}

/** Runs `action` now, or once the document being rendered is whole and its threads restored (in place of any earlier one). */
function whenReady(action: () => void): void {
  if (building) building.ask = action;
  else action();
}

function showNotice(text: string | null): void {
  elements.notice.hidden = text === null;
  elements.notice.textContent = text ?? "";
}

function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`reader.html lacks #${id}`);
  return element;
}

function typing(target: EventTarget | null): boolean {
  return target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement;
}

// A highlighted passage leads to its card. Links open through the host (the iframe
// may not navigate); in-page links scroll.
document.addEventListener("click", (event) => {
  const target = event.target as Element | null;
  const mark = target?.closest?.<HTMLElement>("mark.passage");
  if (mark?.dataset.thread && document.getSelection()?.isCollapsed !== false) threads.open(mark.dataset.thread);
  const link = target?.closest?.("a[href]");
  if (!(link instanceof HTMLAnchorElement)) return;
  event.preventDefault();
  const href = link.getAttribute("href") ?? "";
  if (link === elements.skip) keys.focusCurrent();
  else if (href.startsWith("#")) document.getElementById(href.slice(1))?.scrollIntoView({ behavior: "smooth", block: "start" });
  else void app.openLink({ url: link.href }).catch((error: Error) => console.warn("backchannel reader: the host did not open the link:", error));
});
document.addEventListener("selectionchange", () =>
  requestAnimationFrame(() => {
    const range = selectedRange();
    if (range) {
      const rects = range.getClientRects();
      askButton.show(
        rects[0] ?? range.getBoundingClientRect(),
        askLabel(range.toString(), wholeSentence(range), blockOf(document.activeElement) !== null),
      );
    } else if (!blockOf(document.activeElement)) askButton.hide();
  }),
);
// A passage selected with a pointer grows to whole words once the pointer is up (word-snap.ts says when not).
let selectingInDocument = false;
document.addEventListener("pointerdown", (event) => {
  selectingInDocument = event.button === 0 && event.target instanceof Node && elements.doc.contains(event.target);
});
document.addEventListener("pointerup", () => {
  if (selectingInDocument) snapSelectionToWords(elements.doc);
  selectingInDocument = false;
});
elements.ask.addEventListener("click", askFromButton);
document.addEventListener("keydown", (event) => {
  // Alt+↓ / Alt+↑: the next / previous thread, from anywhere.
  if (event.altKey && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
    if (threads.move(event.key === "ArrowDown" ? 1 : -1)) event.preventDefault();
    return;
  }
  if (typing(event.target)) return;
  if (event.key === "?") {
    elements.keysHelp.open = !elements.keysHelp.open;
    elements.keysHelp.querySelector("summary")?.focus();
    return;
  }
  // With a passage selected by mouse or touch: Ctrl/Cmd+Enter or "a" asks about it.
  if (blockOf(event.target as Node) || !selectedRange()) return;
  if ((event.key === "Enter" && (event.ctrlKey || event.metaKey)) || (event.key === "a" && !event.ctrlKey && !event.metaKey && !event.altKey)) {
    event.preventDefault();
    askFromButton();
  } else if (event.key === "Escape") {
    askButton.hide();
  }
});

/** The state the browser host put in this frame (web/ahead-frame.ts), or none (any other host, or a state that does not parse). */
function aheadState(): AheadReaderState | undefined {
  const text = document.getElementById(AHEAD_STATE_ELEMENT)?.textContent;
  if (!text) return undefined;
  try {
    const state = JSON.parse(text) as AheadReaderState;
    return typeof state.channel_id === "string" && state.document !== null && typeof state.document === "object" ? state : undefined;
  } catch {
    return undefined;
  }
}
