/**
 * Markdown parsed a piece at a time, so that a long document's first screen is rendered
 * before the rest is even parsed. The HTML of all the pieces, in order, is exactly
 * `markdown.render(source)` (test/unit/markdown-pieces.test.ts checks it).
 *
 * Two kinds of steps, each cheap:
 * - {@link MarkdownPieces.splitMore} parses the block structure (lines, headings, lists,
 *   fences, tables) of the next window of the source, about {@link WINDOW_CHARS}
 *   characters, and keeps its top-level elements but the last. A top-level element that
 *   closed before another one began was decided from lines inside the window, so it is
 *   the same as in a parse of the whole source; the last one may be cut short by the
 *   window, so the next window starts with it. One thing crosses elements: a reference
 *   definition (`[label]: url`) serves links anywhere in the document, so a source that
 *   may hold one (any `]:`) is parsed whole in its first step.
 * - {@link MarkdownPieces.html} parses the inline content (emphasis, links, code spans,
 *   entities) of a run of top-level elements and renders it. markdown-it's core chain
 *   runs block-level rules first, then rules that each work inside one `inline` token
 *   ({@link INLINE_CORE_RULES}); the second group may therefore run on any run of tokens.
 */
import markdownIt, { type MarkdownIt, type Token } from "markdown-it";

/** The core rules that work inside each `inline` token, never across tokens. */
const INLINE_CORE_RULES = ["inline", "linkify", "replacements", "smartquotes", "text_join"];

/** Characters of source one {@link MarkdownPieces.splitMore} parses (more when one element is longer): a few ms of work. */
const WINDOW_CHARS = 32 * 1024;

/** The reader's markdown settings: raw HTML off, links checked by markdown-it, images off (the host's CSP refuses them). */
function createMarkdown(): MarkdownIt {
  return markdownIt({ html: false, linkify: true, typographer: false }).disable("image");
}

/** The one markdown renderer of the reader (documents and answers). */
export const markdown: MarkdownIt = createMarkdown();

/** The same settings, running only the block-level part of the core chain. */
const blockLevel = createMarkdown();
blockLevel.core.ruler.disable(INLINE_CORE_RULES);

/** The same settings, running only the inline part of the core chain. */
const inlineLevel = createMarkdown();
inlineLevel.core.ruler.enableOnly(INLINE_CORE_RULES);

/** A markdown document split at its top-level elements (paragraphs, headings, lists, tables, fences, …), as far as parsed. */
export class MarkdownPieces {
  private readonly tokens: Token[] = [];
  /** The index in {@link tokens} where each top-level element starts. */
  private readonly starts: number[] = [];
  private readonly env: Record<string, unknown> = {};
  /** Where the source not parsed yet begins (a line start). */
  private rest = 0;
  /** Whether the source may hold a reference definition (then it is parsed whole). */
  private readonly mayHoldReferences: boolean;

  private readonly source: string;

  /** Splits nothing yet: call {@link splitMore} until {@link complete}. */
  constructor(source: string) {
    // Line ends as markdown-it's normalize makes them, so that its line numbers are this text's.
    this.source = source.replace(/\r\n?/g, "\n");
    this.mayHoldReferences = source.includes("]:");
  }

  /** How many top-level elements are known so far. */
  get length(): number {
    return this.starts.length;
  }

  /** Whether the whole source has been split. */
  get complete(): boolean {
    return this.rest >= this.source.length;
  }

  /** Parses the block structure of the next window of the source (the whole source when it may hold reference definitions). */
  splitMore(): void {
    if (this.complete) return;
    let size = WINDOW_CHARS;
    for (;;) {
      const end = this.mayHoldReferences ? this.source.length : lineEndAfter(this.source, this.rest + size);
      const text = this.source.slice(this.rest, end);
      const tokens = blockLevel.parse(text, this.env);
      if (end >= this.source.length) {
        this.keep(tokens, tokens.length);
        this.rest = this.source.length;
        return;
      }
      // Keep every top-level element but the last, which the window may have cut short.
      const lastStart = tokens.findLastIndex((token) => token.level === 0 && token.nesting !== -1);
      if (lastStart > 0) {
        this.keep(tokens, lastStart);
        this.rest += lineOffset(text, tokens[lastStart]!.map![0]);
        return;
      }
      // One element fills the window: look further.
      size *= 2;
    }
  }

  /**
   * The HTML of top-level elements `from` up to `to` (excluded; clipped to those split so
   * far). Each run is meant to be rendered once: its inline content is parsed in place.
   */
  html(from: number, to: number): string {
    const slice = this.tokens.slice(this.starts[from] ?? this.tokens.length, this.starts[to] ?? this.tokens.length);
    const state = new inlineLevel.core.State("", inlineLevel, this.env);
    state.tokens = slice;
    inlineLevel.core.process(state);
    return markdown.renderer.render(slice, markdown.options, this.env);
  }

  /** Appends `tokens` up to `count` (excluded), noting where each top-level element starts. */
  private keep(tokens: Token[], count: number): void {
    for (let index = 0; index < count; index += 1) {
      const token = tokens[index]!;
      // A top-level element begins with a token at level 0 that does not close one.
      if (token.level === 0 && token.nesting !== -1) this.starts.push(this.tokens.length);
      this.tokens.push(token);
    }
  }
}

/** The index just past the line end at or after `at` in `text` (its length when there is none). */
function lineEndAfter(text: string, at: number): number {
  const newline = text.indexOf("\n", at);
  return newline < 0 ? text.length : newline + 1;
}

/** The character offset where line `line` (0-based) of `text` begins. */
function lineOffset(text: string, line: number): number {
  let offset = 0;
  for (let index = 0; index < line; index += 1) offset = text.indexOf("\n", offset) + 1;
  return offset;
}
