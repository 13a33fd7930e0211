/**
 * A passage selected with the mouse is grown to whole words. A drag starts and ends a
 * little off, so "carries a sequence number that grows by one" comes out as "s a
 * sequence number that grows by o": the person meant the words the drag touched, and
 * the Ask button (and the quote the agent gets) should name those. Two exceptions:
 *
 * - a selection within one word is left as it is: it can only be on purpose (a prefix,
 *   the root of a compound, part of an identifier), and growing it would make that
 *   impossible to ask about;
 * - spaces at either end are dropped, and an end that falls between words stays there
 *   (it already is a word boundary; punctuation the person took in stays in).
 *
 * Words are the browser's (`Intl.Segmenter`), so words without spaces between them
 * (Chinese, Japanese, Thai) snap too. Only a selection made by a pointer is snapped:
 * one made with the keyboard (a sentence, or Shift and the arrows) is exactly what the
 * person chose.
 */
/** A span of a block's text, `[start, end)` in UTF-16 code units. */
export interface TextSpan {
  start: number;
  end: number;
}

const wordSegmenter = new Intl.Segmenter(undefined, { granularity: "word" });

/**
 * The span `start`–`end` of `text` grown to whole words at both ends, unless it lies
 * within one word (then it is kept as it is), without the spaces at its ends.
 * @returns the span unchanged when it holds nothing but spaces.
 */
export function snapToWords(text: string, start: number, end: number): TextSpan {
  const trimmed = withoutSpaces(text, start, end);
  if (trimmed.start >= trimmed.end) return { start, end };
  const segments = wordSegmenter.segment(text);
  const first = segments.containing(trimmed.start);
  const last = segments.containing(trimmed.end - 1);
  if (first === undefined || last === undefined || first.index === last.index) return trimmed;
  return {
    start: first.isWordLike ? first.index : trimmed.start,
    end: last.isWordLike ? last.index + last.segment.length : trimmed.end,
  };
}

/** The start of the word `offset` falls inside in `text` (spaces after it skipped), else `offset`. */
export function wordStart(text: string, offset: number): number {
  const from = withoutSpaces(text, offset, text.length).start;
  const segment = wordSegmenter.segment(text).containing(from);
  return segment?.isWordLike ? segment.index : from;
}

/** The end of the word that ends at or runs past `offset` in `text` (spaces before it skipped), else `offset`. */
export function wordEnd(text: string, offset: number): number {
  const to = withoutSpaces(text, 0, offset).end;
  const segment = to > 0 ? wordSegmenter.segment(text).containing(to - 1) : undefined;
  return segment?.isWordLike ? segment.index + segment.segment.length : to;
}

/** The span `start`–`end` of `text` without the white space at its ends. */
function withoutSpaces(text: string, start: number, end: number): TextSpan {
  let from = start;
  let to = end;
  while (from < to && /\s/u.test(text[from]!)) from += 1;
  while (to > from && /\s/u.test(text[to - 1]!)) to -= 1;
  return { start: from, end: to };
}
