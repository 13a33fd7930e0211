/**
 * Unit tests of markdown in pieces (app/markdown-pieces.ts): splitting a document a
 * window at a time and rendering it a run of top-level elements at a time gives exactly
 * the HTML of rendering it whole, also where a piece needs something from another (a
 * reference defined at the end) or a window cuts an element (a fence, a list, a table,
 * a setext heading, a paragraph).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { markdown, MarkdownPieces } from "../../app/markdown-pieces.js";
import { longMarkdown } from "../support/long-document.js";

/** The HTML of `source` rendered in runs of `size` top-level elements, each as soon as it is split, as the reader does. */
function inRuns(source: string, size: number): string {
  const pieces = new MarkdownPieces(source);
  let html = "";
  let from = 0;
  while (!pieces.complete || from < pieces.length) {
    if (pieces.length < from + size && !pieces.complete) pieces.splitMore();
    else {
      html += pieces.html(from, from + size);
      from += size;
    }
  }
  return html;
}

const TRICKY = [
  "# Title with `code` and *emphasis*",
  "",
  "A [reference link][later] and https://example.com/linkified and &amp; &copy; entities.",
  "",
  "- a tight list",
  "- with **two** items",
  "",
  "1. a loose list",
  "",
  "2. with a second paragraph",
  "",
  "   inside an item",
  "",
  "```js",
  "const fence = '<b>not html</b>';",
  "",
  "// a blank line inside the fence",
  "```",
  "",
  "> a quote",
  "> > nested",
  "",
  "| a | b |",
  "|---|---|",
  "| `x` | [y][later] |",
  "",
  "Setext heading",
  "--------------",
  "",
  "<script>alert(1)</script> raw HTML stays text; ![an image](x.png) stays off.",
  "",
  "    indented code",
  "",
  "***",
  "",
  "[later]: https://example.com/defined-at-the-end",
  "",
].join("\n");

describe("markdown in pieces", () => {
  test("runs of any size render exactly what the whole document renders", () => {
    const whole = markdown.render(TRICKY);
    for (const size of [1, 2, 3, 7, 1000]) assert.equal(inRuns(TRICKY, size), whole, `runs of ${size}`);
  });

  test("a reference defined at the end is found by a piece before it, and raw HTML stays text", () => {
    const html = inRuns(TRICKY, 1);
    assert.match(html, /<a href="https:\/\/example\.com\/defined-at-the-end">reference link<\/a>/);
    assert.match(html, /&lt;script&gt;/);
    assert.doesNotMatch(html, /<img/);
  });

  test("a 1 MiB document, split a window at a time, renders in chunks of 40 as it does whole", () => {
    const { markdown: source } = longMarkdown();
    const pieces = new MarkdownPieces(source);
    pieces.splitMore();
    assert.ok(!pieces.complete && pieces.length >= 40, `the first window gives the first chunk (${pieces.length} elements)`);
    assert.equal(inRuns(source, 40), markdown.render(source));
  });

  test("windows that cut fences, lists, tables, setext headings and paragraphs keep the whole document's structure", () => {
    // No "]:" anywhere, so the source is split a window at a time; each repetition shifts the cuts.
    const parts: string[] = [];
    for (let index = 0; parts.join("\n").length < 300_000; index += 1) {
      const filler = "word ".repeat(index % 97);
      parts.push(
        `Paragraph ${index} ${filler}`,
        "with a lazy second line",
        "",
        `Setext ${index}`,
        "===",
        "",
        "```",
        ...Array.from({ length: index % 13 }, (_, line) => `code ${line}`),
        "",
        "still code after a blank line",
        "```",
        "",
        "- item one",
        "",
        "- item two, loose",
        "  continued",
        "",
        "| a | b |",
        "|---|---|",
        `| ${index} | ${filler} |`,
        "",
        "> quoted",
        "lazy quoted",
        "",
        "    indented code",
        "",
        "    more of it",
        "",
      );
    }
    const source = parts.join("\n");
    const whole = markdown.render(source);
    assert.equal(inRuns(source, 40), whole);
    assert.equal(inRuns(source.replace(/\n/g, "\r\n"), 40), whole, "CRLF line ends");
    assert.equal(inRuns(source.replace(/\n/g, "\r"), 7), markdown.render(source.replace(/\n/g, "\r")), "CR line ends");
  });

  test("one element longer than a window is kept whole", () => {
    const source = ["```", ...Array.from({ length: 20_000 }, (_, line) => `line ${line}`), "```", "", "after"].join("\n");
    assert.equal(inRuns(source, 1), markdown.render(source));
  });

  test("an empty or blank document has no pieces", () => {
    for (const source of ["", "\n\n   \n"]) {
      const pieces = new MarkdownPieces(source);
      pieces.splitMore();
      assert.ok(pieces.complete);
      assert.equal(pieces.length, 0);
      assert.equal(pieces.html(0, 40), "");
    }
  });
});
