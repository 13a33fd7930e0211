/**
 * Unit tests of growing a selected span to whole words (app/words.ts): a span across a
 * word boundary grows to the words it touches, one within a word stays, spaces at its
 * ends go, punctuation taken in stays, and words without spaces between them snap too.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { snapToWords, wordEnd, wordStart } from "../../app/words.js";

const TEXT = "A message carries a sequence number that grows by one and is never reused.";

/** `snapToWords` over the first occurrence of `selected` in `text`, as the text it gives. */
function snapped(selected: string, text = TEXT): string {
  const start = text.indexOf(selected);
  assert.ok(start >= 0, `${selected} is in the text`);
  const span = snapToWords(text, start, start + selected.length);
  return text.slice(span.start, span.end);
}

describe("snapToWords", () => {
  test("a span across words grows to the whole words it touches", () => {
    assert.equal(snapped("s a sequence number that grows by o"), "carries a sequence number that grows by one");
    assert.equal(snapped("ge carries"), "message carries");
    assert.equal(snapped("message c"), "message carries");
  });

  test("a span within one word stays as it is, also the whole word", () => {
    assert.equal(snapped("quen"), "quen");
    assert.equal(snapped("sequence"), "sequence");
    assert.equal(snapped("re", "never reused"), "re");
  });

  test("spaces at its ends go; an end between words stays; punctuation taken in stays", () => {
    assert.equal(snapped(" a sequence "), "a sequence");
    assert.equal(snapped("never reused."), "never reused.");
    assert.equal(snapped("ver reused."), "never reused.");
    assert.equal(snapped("   ", "a   b"), "   ", "only spaces: unchanged");
  });

  test("words joined by an apostrophe, a hyphen's halves, digits and identifiers", () => {
    assert.equal(snapped("n't stop", "they don't stop here"), "don't stop");
    assert.equal(snapped("ll-kno", "a well-known fact"), "well-known");
    assert.equal(snapped("000 mes", "1,000 messages wait"), "1,000 messages");
    assert.equal(snapped("agent_mess", "call poll_agent_messages now"), "agent_mess", "within one identifier");
    assert.equal(snapped("l poll_ag", "call poll_agent_messages now"), "call poll_agent_messages");
  });

  test("words with no spaces between them (Japanese) snap too", () => {
    const text = "日本語の文章を読む";
    const span = snapToWords(text, 1, 5);
    assert.ok(span.start <= 1 && span.end >= 5, JSON.stringify(span));
    assert.ok(span.start < 1 || span.end > 5, "it grew at one end at least");
  });
});

describe("wordStart and wordEnd (a selection across blocks)", () => {
  test("grow an end inside a word to the word's edge, skip spaces, and leave an end between words", () => {
    assert.equal(wordStart(TEXT, TEXT.indexOf("quence")), TEXT.indexOf("sequence"));
    assert.equal(wordStart(TEXT, TEXT.indexOf(" sequence")), TEXT.indexOf("sequence"));
    assert.equal(wordEnd(TEXT, TEXT.indexOf("quence")), TEXT.indexOf("sequence") + "sequence".length);
    assert.equal(wordEnd(TEXT, TEXT.indexOf(" number")), TEXT.indexOf(" number"));
    assert.equal(wordEnd(TEXT, 0), 0);
  });
});
