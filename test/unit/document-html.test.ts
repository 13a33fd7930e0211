/**
 * Unit tests of a document as HTML (app/document-html.ts), what the browser host puts in
 * the reader's frame: its chunks cut as the reader cuts them, markdown's HTML exactly
 * markdown-it's, plain text escaped so that the HTML parser gives back its very text.
 * (test/browser-host.test.ts checks in Chromium that the reader's own rendering and the
 * adopted one are the same DOM.)
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AT_ONCE_CHUNKS, CHUNK_SIZE, chunkPlan, documentChunks, FIRST_CHUNK_SIZE, textParagraphs } from "../../app/document-html.js";
import { MarkdownPieces, markdown } from "../../app/markdown-pieces.js";
import type { ReaderDocument } from "../../protocol/reader.js";
import { longMarkdown } from "../support/long-document.js";

/** A document of `format` holding `text`. */
function doc(format: ReaderDocument["format"], text: string): ReaderDocument {
  return { title: "T", format, text, words: 0, opened_at: "2026-12-04T00:00:00.000Z" };
}

/** The chunks of `doc`, each without its `<div class="chunk">`. */
function chunksOf(document: ReaderDocument): string[] {
  const chunks = documentChunks(document);
  assert.ok(chunks, "the document can be rendered");
  return [...chunks].map((chunk) => {
    assert.match(chunk, /^<div class="chunk">[\s\S]*<\/div>$/);
    return chunk.slice('<div class="chunk">'.length, -"</div>".length);
  });
}

/** The sizes of the chunks a document of `count` paragraphs is cut in. */
function sizesOf(count: number): number[] {
  const pieces = { length: count, complete: true, splitMore: () => undefined };
  return [...chunkPlan(pieces).chunks].map(({ from, to }) => to - from);
}

describe("chunks", () => {
  test("a short document in chunks of 40, a long one in a first chunk of 12 and then 40s", () => {
    assert.deepEqual(sizesOf(0), []);
    assert.deepEqual(sizesOf(5), [5]);
    assert.deepEqual(sizesOf(AT_ONCE_CHUNKS * CHUNK_SIZE), [40, 40, 40]);
    assert.deepEqual(sizesOf(AT_ONCE_CHUNKS * CHUNK_SIZE + 1), [FIRST_CHUNK_SIZE, 40, 40, 40 - FIRST_CHUNK_SIZE + 1]);
    assert.deepEqual(sizesOf(200), [12, 40, 40, 40, 40, 28]);
  });

  test("a long markdown document: its chunks together are markdown-it's HTML of it whole, cut where the reader cuts", () => {
    const { markdown: text } = longMarkdown(200 * 1024, 11);
    const chunks = chunksOf(doc("markdown", text));
    assert.equal(chunks.join(""), markdown.render(text));
    const pieces = new MarkdownPieces(text);
    const plan = chunkPlan(pieces);
    assert.equal(plan.short, false);
    assert.deepEqual(
      chunks,
      [...plan.chunks].map(({ from, to }) => pieces.html(from, to)),
    );
  });

  test("markdown's raw HTML stays text", () => {
    const [chunk] = chunksOf(doc("markdown", "<script>alert(1)</script>\n\n<b>bold</b> & </div>"));
    assert.equal(chunk, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n<p>&lt;b&gt;bold&lt;/b&gt; &amp; &lt;/div&gt;</p>\n");
  });
});

describe("plain text", () => {
  test("each paragraph escaped, a carriage return kept as a character reference", () => {
    const text = 'First <b>one</b> & "two"\r\nstill first\n\n\n  \nSecond\r';
    assert.deepEqual(textParagraphs(text), ['First <b>one</b> & "two"\r\nstill first', "Second\r"]);
    assert.deepEqual(chunksOf(doc("text", text)), ["<p>First &lt;b&gt;one&lt;/b&gt; &amp; &quot;two&quot;&#13;\nstill first</p><p>Second&#13;</p>"]);
  });

  test("text that holds a NUL character, which the HTML parser would drop, is not rendered ahead", () => {
    assert.equal(documentChunks(doc("text", "a\0b")), null);
  });
});
