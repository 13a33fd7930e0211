/**
 * Rendering the document and addressing passages in it.
 *
 * Markdown goes through markdown-it with raw HTML off and images off (an image would
 * be a request the host's CSP refuses): its output escapes every character of the
 * source, so it is safe to assign as HTML. Plain text only ever becomes `textContent`.
 *
 * Long documents: the top-level elements are grouped into chunks of {@link CHUNK_SIZE},
 * each `content-visibility: auto` (style.css), so the browser lays out and paints only
 * the chunks near the view; an update on screen then costs the same on 1 MB as on 1 KB.
 *
 * A passage is addressed by a {@link PassageAnchor}: the index of a leaf block (a
 * paragraph, list item, heading, cell, code block, … that holds no other block) and
 * character offsets into its text. Rendering the same document always yields the same
 * blocks, so an anchor stored on the server finds its passage again after a reload.
 */
import markdownIt, { type MarkdownIt } from "markdown-it";
import type { PassageAnchor, ReaderDocument } from "../protocol/reader.js";

/** Elements that count as blocks; only those that contain no other block are used. */
const BLOCK_SELECTOR = "p, li, h1, h2, h3, h4, h5, h6, pre, td, th, dt, dd";

/** Top-level elements per chunk: small enough that one chunk lays out quickly, large enough that there are few. */
const CHUNK_SIZE = 40;

/** The one markdown renderer of the reader: raw HTML off, links checked by markdown-it, images off. */
export const markdown: MarkdownIt = markdownIt({ html: false, linkify: true, typographer: false }).disable("image");

/** What {@link renderDocument} produced. */
export interface RenderedDocument {
  /** The leaf blocks, in document order: `blocks[anchor.block]`. */
  blocks: HTMLElement[];
  /** The headings, for the table of contents. */
  headings: HTMLElement[];
}

/** Renders `doc` into `container` (replacing its content), numbers its blocks and gives headings ids. */
export function renderDocument(container: HTMLElement, doc: ReaderDocument): RenderedDocument {
  const template = document.createElement("template");
  if (doc.format === "markdown") {
    template.innerHTML = markdown.render(doc.text);
  } else {
    template.content.append(
      ...doc.text
        .split(/\n\s*\n/)
        .filter((part) => part.trim() !== "")
        .map((part) => {
          const paragraph = document.createElement("p");
          paragraph.textContent = part;
          return paragraph;
        }),
    );
  }
  makeScrollablesFocusable(template.content);
  const children = [...template.content.children];
  const chunks: HTMLElement[] = [];
  for (let index = 0; index < children.length; index += CHUNK_SIZE) {
    const chunk = document.createElement("div");
    chunk.className = "chunk";
    chunk.append(...children.slice(index, index + CHUNK_SIZE));
    chunks.push(chunk);
  }
  container.replaceChildren(...chunks);
  const blocks = [...container.querySelectorAll<HTMLElement>(BLOCK_SELECTOR)].filter((element) => !element.querySelector(BLOCK_SELECTOR));
  blocks.forEach((block, index) => (block.dataset.block = String(index)));
  const headings = [...container.querySelectorAll<HTMLElement>("h1, h2, h3, h4, h5, h6")];
  headings.forEach((heading, index) => (heading.id = `section-${index + 1}`));
  return { blocks, headings };
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
function offsetIn(block: HTMLElement, node: Node, offset: number): number {
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
