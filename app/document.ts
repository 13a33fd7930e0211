/**
 * Rendering the document and addressing passages in it.
 *
 * Markdown goes through markdown-it with raw HTML off and images off (an image would
 * be a request the host's CSP refuses): its output escapes every character of the
 * source, so it is safe to assign as HTML. Plain text only ever becomes `textContent`.
 *
 * Long documents: the top-level elements are grouped into chunks (./document-html.ts,
 * `chunkPlan`), each `content-visibility: auto` (style.css), so the browser lays out and paints only
 * the chunks near the view; an update on screen then costs the same on 1 MB as on 1 KB.
 * The first chunk (about a screen) is rendered at
 * once and the others in short slices of work between which the browser paints and
 * handles input (markdown-pieces.ts parses the source a window at a time, as the chunks
 * need it), so the first screen of a 1 MiB document costs what a short document does.
 * While chunks are still being added, the document is `aria-busy`.
 *
 * A passage is addressed by a {@link PassageAnchor}: the index of a leaf block (a
 * paragraph, list item, heading, cell, code block, … that holds no other block) and
 * character offsets into its text. Rendering the same document always yields the same
 * blocks, so an anchor stored on the server finds its passage again after a reload.
 * A document the browser host rendered ahead (./document-html.ts) is adopted, not
 * rebuilt: its chunks and blocks are the same.
 */
import type { PassageAnchor, ReaderDocument } from "../protocol/reader.js";
import { CHUNK_CLASS, chunkPlan, type DocumentPieces, textParagraphs } from "./document-html.js";
import { MarkdownPieces } from "./markdown-pieces.js";

export { markdown } from "./markdown-pieces.js";

/** Elements that count as blocks; only those that contain no other block are used. */
const BLOCK_SELECTOR = "p, li, h1, h2, h3, h4, h5, h6, pre, td, th, dt, dd";

/** How long one slice of rendering may run before it lets the browser paint and handle input. */
const SLICE_MS = 12;

/** What {@link renderDocument} produced. */
export interface RenderedDocument {
  /** The leaf blocks, in document order: `blocks[anchor.block]`. It grows until {@link done}. */
  blocks: HTMLElement[];
  /** The headings, in document order. It grows until {@link done}. */
  headings: HTMLElement[];
  /** Whether the whole document was rendered at once (then {@link done} is already settled). */
  whole: boolean;
  /**
   * Resolves once every chunk is in the DOM: `true`, or `false` when another
   * {@link renderDocument} on the same container took over first (this document is gone).
   */
  done: Promise<boolean>;
}

/** The top-level elements of a document, split from its source a part at a time and rendered a run at a time. */
interface Pieces extends DocumentPieces {
  /** Top-level elements `from` up to `to` (excluded), as a new fragment. */
  render(from: number, to: number): DocumentFragment;
}

/** Which rendering of each container is the current one; an older one stops at its next slice. */
const renderings = new WeakMap<HTMLElement, object>();

/**
 * Renders `doc` into `container` (replacing its content), numbers its blocks and gives
 * headings ids. The first chunk (or a short document entirely) is in the DOM when this
 * returns; the rest follows in slices of work (`done`).
 */
export function renderDocument(container: HTMLElement, doc: ReaderDocument): RenderedDocument {
  const pieces = doc.format === "markdown" ? markdownPieces(doc.text) : textPieces(doc.text);
  const rendering = {};
  renderings.set(container, rendering);
  const rendered: RenderedDocument = { blocks: [], headings: [], whole: true, done: Promise.resolve(true) };
  /** Adds the next chunk; false once everything is in. */
  const addChunk = (): boolean => {
    const next = plan.chunks.next();
    if (next.done) return false;
    const chunk = document.createElement("div");
    chunk.className = CHUNK_CLASS;
    chunk.append(pieces.render(next.value.from, next.value.to));
    container.append(chunk);
    numberChunk(chunk, rendered);
    return true;
  };
  container.replaceChildren();
  container.removeAttribute("aria-busy");
  const plan = chunkPlan(pieces);
  if (plan.short) {
    while (addChunk());
    return rendered;
  }
  // A long one: the first chunk, about a screen, now, and the rest later.
  addChunk();
  rendered.whole = false;
  container.setAttribute("aria-busy", "true");
  rendered.done = (async () => {
    for (let more = true; more; ) {
      await nextTask();
      if (renderings.get(container) !== rendering) return false;
      const sliceEnd = performance.now() + SLICE_MS;
      do more = addChunk();
      while (more && performance.now() < sliceEnd);
    }
    container.removeAttribute("aria-busy");
    return true;
  })();
  return rendered;
}

/**
 * Takes the document the browser host rendered into `container` ahead of the reader
 * (./document-html.ts, web/ahead-frame.ts) as if {@link renderDocument} had built it:
 * numbers its blocks, gives headings ids and makes what scrolls sideways focusable.
 * The whole document is in at once.
 */
export function adoptDocument(container: HTMLElement): RenderedDocument {
  renderings.set(container, {});
  const rendered: RenderedDocument = { blocks: [], headings: [], whole: true, done: Promise.resolve(true) };
  for (const chunk of container.children) numberChunk(chunk, rendered);
  return rendered;
}

/** Makes what scrolls sideways in `chunk` focusable, numbers its blocks after those of `rendered` and gives its headings ids. */
function numberChunk(chunk: Element, rendered: RenderedDocument): void {
  makeScrollablesFocusable(chunk);
  for (const block of chunk.querySelectorAll<HTMLElement>(BLOCK_SELECTOR)) {
    if (block.querySelector(BLOCK_SELECTOR)) continue;
    block.dataset.block = String(rendered.blocks.length);
    rendered.blocks.push(block);
  }
  for (const heading of chunk.querySelectorAll<HTMLElement>("h1, h2, h3, h4, h5, h6")) {
    heading.id = `section-${rendered.headings.length + 1}`;
    rendered.headings.push(heading);
  }
}

/** Markdown's top-level elements (raw HTML off, so the HTML is safe to assign). */
function markdownPieces(source: string): Pieces {
  const pieces = new MarkdownPieces(source);
  return {
    get length() {
      return pieces.length;
    },
    get complete() {
      return pieces.complete;
    },
    splitMore: () => pieces.splitMore(),
    render(from, to) {
      const template = document.createElement("template");
      template.innerHTML = pieces.html(from, to);
      return template.content;
    },
  };
}

/** Plain text's paragraphs (blank-line separated), as text only; split at once (a regular expression over the text). */
function textPieces(text: string): Pieces {
  const parts = textParagraphs(text);
  return {
    length: parts.length,
    complete: true,
    splitMore: () => undefined,
    render(from, to) {
      const fragment = document.createDocumentFragment();
      for (const part of parts.slice(from, to)) {
        const paragraph = document.createElement("p");
        paragraph.textContent = part;
        fragment.append(paragraph);
      }
      return fragment;
    },
  };
}

/**
 * Resolves in a new task, after the browser has had its chance to paint and handle
 * input. A message, not a timer: timers of a page in the background wait up to a
 * minute, and nested ones at least 4 ms.
 */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/**
 * Makes what may scroll sideways reachable by keyboard: code blocks get a tab stop, and
 * each table is wrapped in a focusable region that scrolls.
 */
export function makeScrollablesFocusable(root: ParentNode): void {
  for (const pre of root.querySelectorAll<HTMLElement>("pre")) pre.tabIndex = 0;
  for (const table of root.querySelectorAll("table")) {
    const region = document.createElement("div");
    region.className = "table-scroll";
    region.tabIndex = 0;
    region.setAttribute("role", "region");
    region.setAttribute("aria-label", "Table");
    table.replaceWith(region);
    region.append(table);
  }
}

/** The element directly inside a chunk of `container` that holds `node` (where a card goes on a narrow reader). */
export function topLevelOf(container: HTMLElement, node: Element): Element {
  let element = node;
  while (element.parentElement && element.parentElement !== container && !element.parentElement.classList.contains("chunk"))
    element = element.parentElement;
  return element;
}

/** The block that contains `node`, or `null` outside any block. */
export function blockOf(node: Node | null): HTMLElement | null {
  const element = node instanceof Element ? node : (node?.parentElement ?? null);
  return element?.closest<HTMLElement>("[data-block]") ?? null;
}

/** The anchor of `range`, clipped to the block where it starts; `null` when it starts outside a block or is empty. */
export function anchorOf(range: Range): PassageAnchor | null {
  const block = blockOf(range.startContainer);
  if (!block) return null;
  const start = offsetIn(block, range.startContainer, range.startOffset);
  const end = block.contains(range.endContainer) ? offsetIn(block, range.endContainer, range.endOffset) : (block.textContent ?? "").length;
  if (end <= start) return null;
  return { block: Number(block.dataset.block), start, end };
}

/** The character offset of the point (`node`, `offset`) in the text of `block`. */
export function offsetIn(block: HTMLElement, node: Node, offset: number): number {
  const range = document.createRange();
  range.selectNodeContents(block);
  range.setEnd(node, offset);
  return range.toString().length;
}

/**
 * Wraps the passage at `start`–`end` of `block` in `<mark>` elements (one per text node
 * it crosses) that carry `threadId`, and returns them. Offsets past the text are clipped.
 */
export function highlight(block: HTMLElement, start: number, end: number, threadId: string): HTMLElement[] {
  const marks: HTMLElement[] = [];
  const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
  const pieces: { node: Text; from: number; to: number }[] = [];
  let position = 0;
  for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
    const length = node.data.length;
    const from = Math.max(start - position, 0);
    const to = Math.min(end - position, length);
    if (from < to) pieces.push({ node, from, to });
    position += length;
    if (position >= end) break;
  }
  for (const { node, from, to } of pieces) {
    const middle = node.splitText(from);
    middle.splitText(to - from);
    const mark = document.createElement("mark");
    mark.className = "passage";
    mark.dataset.thread = threadId;
    // The first piece is the passage's one tab stop; Enter on it opens the thread's card.
    if (marks.length === 0) {
      mark.tabIndex = 0;
      mark.setAttribute("role", "button");
      mark.title = "Open the thread about this passage";
    }
    middle.replaceWith(mark);
    mark.append(middle);
    marks.push(mark);
  }
  return marks;
}

/** Removes the highlight of `threadId` from `container`, leaving its text in place. */
export function unhighlight(container: HTMLElement, threadId: string): void {
  for (const mark of container.querySelectorAll<HTMLElement>(`mark[data-thread="${CSS.escape(threadId)}"]`)) {
    const parent = mark.parentNode;
    mark.replaceWith(...mark.childNodes);
    parent?.normalize();
  }
}

/** A DOM range over the characters `start`–`end` of `block`'s text (clipped to the text). */
export function rangeOf(block: HTMLElement, start: number, end: number): Range {
  const range = document.createRange();
  range.selectNodeContents(block);
  const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
  let position = 0;
  let startSet = false;
  for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
    const length = node.data.length;
    if (!startSet && start <= position + length) {
      range.setStart(node, Math.max(0, start - position));
      startSet = true;
    }
    if (end <= position + length) {
      range.setEnd(node, Math.max(0, end - position));
      break;
    }
    position += length;
  }
  return range;
}

/** The sentences of `text` as `[start, end)` offsets, without the spaces between them. */
export function sentencesOf(text: string): [number, number][] {
  const spans: [number, number][] = [];
  const segmenter = new Intl.Segmenter(undefined, { granularity: "sentence" });
  for (const { index, segment } of segmenter.segment(text)) {
    const trimmed = segment.trimEnd();
    const lead = trimmed.length - trimmed.trimStart().length;
    if (trimmed.trim() !== "") spans.push([index + lead, index + trimmed.length]);
  }
  return spans;
}
