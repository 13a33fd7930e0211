/**
 * A whole document as HTML, in the chunks the reader's `#doc` holds once every chunk is
 * in. The reader builds the same chunks a slice at a time (./document.ts); the browser
 * host builds them all at once into the reader's frame (web/ahead-frame.ts), and the
 * reader then adopts them instead of building them. Both sides use this module's
 * rules, so a document has one rendering and its blocks one numbering (the passage
 * anchors of protocol/reader.ts index them).
 *
 * It runs in the browser and in Node: markdown-it only, no DOM.
 */
import type { ReaderDocument } from "../protocol/reader.js";
import { MarkdownPieces, markdown } from "./markdown-pieces.js";

/** Top-level elements per chunk: small enough that one chunk lays out quickly, large enough that there are few. */
export const CHUNK_SIZE = 40;

/** Top-level elements in a long document's first chunk: about a screen, so that the first frame lays out no more than it shows. */
export const FIRST_CHUNK_SIZE = 12;

/** A document with at most this many chunks of {@link CHUNK_SIZE} is rendered all at once (it costs what a first screen does). */
export const AT_ONCE_CHUNKS = 3;

/** The class of a chunk's element (style.css makes it `content-visibility: auto`). */
export const CHUNK_CLASS = "chunk";

/** Plain text's paragraphs: its blank-line separated parts that hold more than white space. */
export function textParagraphs(text: string): string[] {
  return text.split(/\n\s*\n/).filter((part) => part.trim() !== "");
}

/**
 * The top-level elements of a document, split from its source a part at a time
 * (./document.ts renders them as DOM, {@link documentChunks} as HTML).
 */
export interface DocumentPieces {
  /** How many top-level elements are known so far. */
  readonly length: number;
  /** Whether the whole source has been split. */
  readonly complete: boolean;
  /** Splits the next part of the source. */
  splitMore(): void;
}

/** How a document is cut into chunks: see {@link chunkPlan}. */
export interface ChunkPlan {
  /** Whether the document is short: all of it goes in at once. */
  short: boolean;
  /** The chunks, in order, each the top-level elements `from` up to `to` (excluded); more of the source is split as a chunk needs it. */
  chunks: Generator<{ from: number; to: number }>;
}

/**
 * How `pieces` is cut into chunks, decided once the first part of its source is split
 * (which this does): a short document (all of it split, at most {@link AT_ONCE_CHUNKS}
 * chunks) in chunks of {@link CHUNK_SIZE}; a long one in a first chunk of
 * {@link FIRST_CHUNK_SIZE}, about a screen, then chunks of {@link CHUNK_SIZE}.
 */
export function chunkPlan(pieces: DocumentPieces): ChunkPlan {
  pieces.splitMore();
  const short = pieces.complete && pieces.length <= AT_ONCE_CHUNKS * CHUNK_SIZE;
  return { short, chunks: chunks(pieces, short ? CHUNK_SIZE : FIRST_CHUNK_SIZE) };
}

/** The chunks of `pieces`, the first of `firstSize` elements and the others of {@link CHUNK_SIZE}. */
function* chunks(pieces: DocumentPieces, firstSize: number): Generator<{ from: number; to: number }> {
  let from = 0;
  let size = firstSize;
  for (;;) {
    while (pieces.length < from + size && !pieces.complete) pieces.splitMore();
    if (from >= pieces.length) return;
    const to = Math.min(from + size, pieces.length);
    yield { from, to };
    from = to;
    size = CHUNK_SIZE;
  }
}

/**
 * The HTML of `doc`'s chunks, one `<div class="chunk">` each, made as they are taken: the
 * HTML parser turns them into exactly what the reader builds. Markdown goes through
 * markdown-it with raw HTML off (./markdown-pieces.ts), plain text is escaped: nothing of
 * the document's source can become markup.
 * @returns the chunks, or `null` for plain text that holds a NUL character, which the
 *   reader keeps but the HTML parser drops.
 */
export function documentChunks(doc: ReaderDocument): Iterable<string> | null {
  if (doc.format === "markdown") {
    const pieces = new MarkdownPieces(doc.text);
    return chunksOf(pieces, (from, to) => pieces.html(from, to));
  }
  if (doc.text.includes("\0")) return null;
  const paragraphs = textParagraphs(doc.text);
  const pieces: DocumentPieces = { length: paragraphs.length, complete: true, splitMore: () => undefined };
  return chunksOf(pieces, (from, to) => paragraphs.slice(from, to).map(paragraphHtml).join(""));
}

/** The chunks of `pieces`, each as `html` makes its elements `from` up to `to` (excluded). */
function* chunksOf(pieces: DocumentPieces, html: (from: number, to: number) => string): Generator<string> {
  for (const { from, to } of chunkPlan(pieces).chunks) yield `<div class="${CHUNK_CLASS}">${html(from, to)}</div>`;
}

/**
 * One paragraph of plain text as the reader makes it (its text, as `textContent`):
 * escaped, and a carriage return as a character reference, which the HTML parser
 * would otherwise turn into a line feed.
 */
function paragraphHtml(text: string): string {
  return `<p>${markdown.utils.escapeHtml(text).replace(/\r/g, "&#13;")}</p>`;
}
