/**
 * The reader, an MCP App. Order of events:
 * 1. register the host handlers, then `await app.connect()` (hosts keep the iframe
 *    hidden until the handshake is done);
 * 2. the host delivers `open_reader`'s result, which names the channel;
 * 3. the reader restores the document and every thread through the app-only
 *    `reader_state` (also after a re-render), starts receiving, then sends `ready`.
 */
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type McpUiHostContext } from "@modelcontextprotocol/ext-apps";
import type { AnswerData, AskData, PassageAnchor, ReaderState, ReaderThread, StatusData, ThreadRole } from "../protocol/reader.js";
import { AppChannel, textOf, type ChannelWall } from "./channel.js";
import { anchorOf, blockOf, highlight, renderDocument, renderToc, unhighlight } from "./document.js";
import { ThreadCard } from "./threads.js";
import "./style.css";

/** Below this width of the reader, cards go under their paragraph instead of into the margin. */
const NARROW_WIDTH = 720;

const elements = {
  title: byId("title"),
  presence: byId("presence"),
  status: byId("status"),
  wall: byId("wall"),
  notice: byId("notice"),
  toc: byId("toc"),
  layout: byId("layout"),
  doc: byId("doc"),
  margin: byId("margin"),
  ask: byId("ask") as HTMLButtonElement,
};

const app = new App({ name: "backchannel-reader", version: "0.1.0" }, {}, { autoResize: true });
const cards = new Map<string, ThreadCard>();
let blocks: HTMLElement[] = [];
let channelId: string | undefined;
let channel: AppChannel | undefined;
let statusTimer: ReturnType<typeof setTimeout> | undefined;
let wallTimer: ReturnType<typeof setTimeout> | undefined;

app.onhostcontextchanged = applyHostContext;
app.ontoolresult = (result) => {
  if (result.isError) return showNotice(textOf(result.content) || "open_reader failed.");
  const id = (result.structuredContent as { channel_id?: unknown } | undefined)?.channel_id;
  if (typeof id === "string" && id !== channelId) void open(id);
};
app.onteardown = async () => {
  channel?.stop();
  return {};
};

await app.connect();
applyHostContext(app.getHostContext() ?? {});
showNotice("Loading the document…");

/** Restores the document and threads of `id`, starts receiving, and tells the agent the reader is ready. */
async function open(id: string): Promise<void> {
  channelId = id;
  channel?.stop();
  let state: ReaderState;
  try {
    const result = await app.callServerTool({ name: "reader_state", arguments: { channel_id: id } });
    if (result.isError) throw new Error(textOf(result.content));
    state = result.structuredContent as ReaderState;
  } catch (error) {
    return showNotice(`Could not load the document: ${(error as Error).message}`);
  }
  if (!state.document) return showNotice("This channel has no document. Ask the agent to open it again with open_reader.");
  showNotice(null);
  elements.title.textContent = state.document.title;
  document.title = state.document.title;
  const rendered = renderDocument(elements.doc, state.document);
  blocks = rendered.blocks;
  renderToc(elements.toc, rendered.headings);
  cards.forEach((card) => card.element.remove());
  cards.clear();
  for (const thread of state.threads) {
    const card = addThread(thread);
    // A question without an answer yet: the answer may still come.
    if (thread.messages.at(-1)?.role === "user") card.setWaiting(true);
  }
  layout();

  channel = new AppChannel(app, { channelId: id });
  channel.onstatechange = (state) => {
    if (state === "retrying") setPresence("Reconnecting…", "offline");
    else if (state === "live" && elements.presence.dataset.state === "offline") setPresence("Connected", "waiting");
  };
  channel.onwall = showWall;
  channel.on("hello", () => setPresence("Agent is listening", "listening"));
  channel.on("status", (data) => showStatus(data as StatusData));
  channel.on("answer", (data, message) => receiveAnswer(data as AnswerData, `ui:${message.seq}`));
  channel.start();
  setPresence("Waiting for the agent", "waiting");
  await channel.send("ready", {}).catch((error: Error) => showNotice(`Could not reach the agent: ${error.message}`));
}

function receiveAnswer(data: AnswerData, id: string): void {
  if (typeof data?.thread_id !== "string" || typeof data.text !== "string") return;
  const card = cards.get(data.thread_id);
  if (!card || card.has(id)) return;
  card.add(id, "agent", data.text);
  card.setWaiting(false);
  setPresence("Agent is listening", "listening");
  layout();
  void record(card, id, "agent", data.text);
}

/** Creates the card of `thread`, highlights its passage and places it. */
function addThread(thread: ReaderThread): ThreadCard {
  const card = new ThreadCard(thread, { onask: ask, ondiscard: discard });
  cards.set(thread.thread_id, card);
  const block = blocks[thread.anchor.block];
  if (block) highlight(block, thread.anchor.start, thread.anchor.end, thread.thread_id);
  const observer = new ResizeObserver(() => scheduleLayout());
  observer.observe(card.element);
  return card;
}

async function ask(card: ThreadCard, question: string): Promise<void> {
  if (!channel) return;
  const { thread } = card;
  const data: AskData = { thread_id: thread.thread_id, quote: thread.quote, paragraph: thread.paragraph, question, history: card.history() };
  card.setWaiting(true);
  try {
    await channel.send("ask", data);
  } catch (error) {
    card.setError(`Not sent: ${(error as Error).message}. Try again.`, question);
    return;
  }
  const id = `q-${randomId()}`;
  card.add(id, "user", question);
  card.setWaiting(true);
  layout();
  void record(card, id, "user", question);
}

function discard(card: ThreadCard): void {
  if (card.thread.messages.length > 0) return;
  unhighlight(elements.doc, card.thread.thread_id);
  card.element.remove();
  cards.delete(card.thread.thread_id);
  layout();
}

/** Stores one message on the server so a re-rendered reader shows it. Idempotent by `id`. */
async function record(card: ThreadCard, id: string, role: ThreadRole, text: string): Promise<void> {
  const { thread } = card;
  try {
    const result = await app.callServerTool({
      name: "reader_record",
      arguments: {
        channel_id: channelId,
        thread_id: thread.thread_id,
        quote: thread.quote,
        paragraph: thread.paragraph,
        anchor: thread.anchor,
        message: { id, role, text },
      },
    });
    if (result.isError) throw new Error(textOf(result.content));
  } catch (error) {
    card.setError(`Not saved, so it will be gone after a reload: ${(error as Error).message}`);
  }
}

/** Starts a thread on the current selection: highlight, card, focus. */
function askAboutSelection(): void {
  const selection = document.getSelection();
  const range = selection && selection.rangeCount > 0 ? selection.getRangeAt(0) : null;
  const anchor = range && elements.doc.contains(range.commonAncestorContainer) ? anchorOf(range) : null;
  if (!anchor) return;
  const block = blocks[anchor.block]!;
  const paragraph = block.textContent ?? "";
  const thread: ReaderThread = { thread_id: `t-${randomId()}`, quote: paragraph.slice(anchor.start, anchor.end), paragraph, anchor, messages: [] };
  selection!.removeAllRanges();
  hideAskButton();
  const card = addThread(thread);
  layout();
  card.focus();
}

/** Shows the floating Ask button at the end of the selection when it lies in the document. */
function updateAskButton(): void {
  const selection = document.getSelection();
  const range = selection && selection.rangeCount > 0 && !selection.isCollapsed ? selection.getRangeAt(0) : null;
  const anchor: PassageAnchor | null = range && blockOf(range.startContainer) && elements.doc.contains(range.startContainer) ? anchorOf(range) : null;
  if (!range || !anchor) {
    hideAskButton();
    return;
  }
  const rects = range.getClientRects();
  const last = rects[rects.length - 1] ?? range.getBoundingClientRect();
  const origin = elements.layout.getBoundingClientRect();
  elements.ask.style.left = `${Math.max(0, Math.min(last.right - origin.left + 4, origin.width - 70))}px`;
  elements.ask.style.top = `${last.bottom - origin.top + 4}px`;
  elements.ask.hidden = false;
}

function hideAskButton(): void {
  elements.ask.hidden = true;
}

let layoutFrame = 0;
function scheduleLayout(): void {
  if (layoutFrame === 0)
    layoutFrame = requestAnimationFrame(() => {
      layoutFrame = 0;
      layout();
    });
}

/**
 * Places every card: in the margin level with its passage (pushed down so that cards
 * never overlap), or, on a narrow reader, right after the top-level element that holds it.
 * Only positions change here, never widths, so it cannot start a resize loop.
 */
function layout(): void {
  const narrow = elements.layout.clientWidth < NARROW_WIDTH;
  elements.layout.classList.toggle("narrow", narrow);
  const placed = [...cards.values()]
    .map((card) => ({ card, mark: elements.doc.querySelector<HTMLElement>(`mark[data-thread="${CSS.escape(card.thread.thread_id)}"]`) }))
    .map(({ card, mark }) => ({ card, mark, top: mark ? mark.getBoundingClientRect().top : Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.top - b.top);
  const marginTop = elements.margin.getBoundingClientRect().top;
  let floor = 0;
  const lastAfter = new Map<Element, Element>();
  for (const { card, mark, top } of placed) {
    const element = card.element;
    if (narrow) {
      element.style.top = "";
      const holder = mark ? topLevelOf(mark) : elements.doc.lastElementChild;
      const after = holder ? (lastAfter.get(holder) ?? holder) : null;
      if (after && after.nextElementSibling !== element) after.after(element);
      else if (!after) elements.doc.append(element);
      if (holder) lastAfter.set(holder, element);
    } else {
      if (element.parentElement !== elements.margin) elements.margin.append(element);
      const wanted = mark ? top - marginTop : floor;
      const placedTop = Math.max(wanted, floor);
      element.style.top = `${placedTop}px`;
      floor = placedTop + element.offsetHeight + 12;
    }
  }
  elements.margin.style.minHeight = narrow ? "" : `${floor}px`;
}

function topLevelOf(node: HTMLElement): Element {
  let element: Element = node;
  while (element.parentElement && element.parentElement !== elements.doc) element = element.parentElement;
  return element;
}

function setPresence(text: string, state: "waiting" | "listening" | "offline"): void {
  elements.presence.textContent = text;
  elements.presence.dataset.state = state;
}

function showStatus(data: StatusData): void {
  clearTimeout(statusTimer);
  elements.status.textContent = typeof data?.text === "string" ? data.text : "";
  const until = data?.until ? Date.parse(data.until) : NaN;
  if (Number.isFinite(until)) statusTimer = setTimeout(() => (elements.status.textContent = ""), Math.max(0, until - Date.now()));
}

/** Shows the session's wall until it expires (the server stops returning it then too). */
function showWall(wall: ChannelWall | null): void {
  clearTimeout(wallTimer);
  elements.wall.textContent = wall?.text ?? "";
  if (!wall) return;
  const until = new Date(wall.until);
  elements.wall.title = `Until ${until.toLocaleString()}`;
  // setTimeout takes at most 2^31-1 ms (about 24.8 days); a wall lasts at most 3 days.
  wallTimer = setTimeout(() => (elements.wall.textContent = ""), Math.max(0, until.getTime() - Date.now()));
}

function showNotice(text: string | null): void {
  elements.notice.hidden = text === null;
  elements.notice.textContent = text ?? "";
}

function applyHostContext(context: McpUiHostContext): void {
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
}

function randomId(): string {
  return [...crypto.getRandomValues(new Uint8Array(6))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`reader.html lacks #${id}`);
  return element;
}

// A highlighted passage leads to its card. Links open through the host (the iframe
// may not navigate); in-page links scroll.
document.addEventListener("click", (event) => {
  const mark = (event.target as Element | null)?.closest?.<HTMLElement>("mark.passage");
  const card = mark?.dataset.thread ? cards.get(mark.dataset.thread) : undefined;
  if (card && document.getSelection()?.isCollapsed !== false) {
    card.element.scrollIntoView({ behavior: "smooth", block: "nearest" });
    card.focus();
  }
  const link = (event.target as Element | null)?.closest?.("a[href]");
  if (!(link instanceof HTMLAnchorElement)) return;
  event.preventDefault();
  const href = link.getAttribute("href") ?? "";
  if (href.startsWith("#")) document.getElementById(href.slice(1))?.scrollIntoView({ behavior: "smooth", block: "start" });
  else void app.openLink({ url: link.href }).catch((error: Error) => showNotice(`Could not open the link: ${error.message}`));
});
document.addEventListener("selectionchange", () => requestAnimationFrame(updateAskButton));
// Keep the selection when the Ask button is pressed.
elements.ask.addEventListener("mousedown", (event) => event.preventDefault());
elements.ask.addEventListener("click", askAboutSelection);
// Keyboard: with a passage selected, Ctrl/Cmd+Enter (or "a") asks about it.
document.addEventListener("keydown", (event) => {
  const typing = event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement;
  if (elements.ask.hidden || typing) return;
  if ((event.key === "Enter" && (event.ctrlKey || event.metaKey)) || (event.key === "a" && !event.ctrlKey && !event.metaKey && !event.altKey)) {
    event.preventDefault();
    askAboutSelection();
  } else if (event.key === "Escape") {
    hideAskButton();
  }
});
new ResizeObserver(() => scheduleLayout()).observe(elements.layout);
