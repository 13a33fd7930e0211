/**
 * Text from outside (the model, the app, files that others can write) on its way to a
 * terminal or another one-line display, and the one way text lengths are counted.
 *
 * Every text that reaches a terminal (the status line, the watcher's lines, the hook's
 * output) goes through {@link oneLine}: a terminal acts on escape sequences (OSC 52
 * writes the clipboard, OSC 8 makes a link, SGR 8 hides text) and on C0 and C1 control
 * characters, and bidirectional controls reorder what is shown. None of them survives,
 * nor does what a person cannot see but a model reads: format and default-ignorable
 * characters (Unicode tag characters, zero-width spaces and joiners, soft hyphens,
 * variation selectors, fillers), which can carry a whole hidden text.
 *
 * Lengths are counted in characters, that is Unicode code points: what JSON Schema's
 * `maxLength` counts, so an advertised limit and the server's check agree, and a plain
 * emoji is one character where UTF-16 counts two. Grapheme clusters would follow what a
 * person sees more closely still (👍🏽 and 🇫🇷 are two code points each), but Node 20's
 * `Intl.Segmenter` takes time quadratic in the length of the text (65,536 letters: 5 s),
 * and every step here must stay linear on hostile input. Cutting does not split a
 * cluster where it can tell (see {@link cutAt}).
 *
 * Every function here is linear in the length of its input.
 */

/** A combining mark (accents, variation selectors, the keycap). */
const COMBINING_MARK = /^\p{M}$/u;

/** What is not seen: format characters (Cf) and default-ignorable code points (tags, zero-width characters, variation selectors, fillers). */
const INVISIBLE = /^[\p{Cf}\p{Default_Ignorable_Code_Point}]$/u;

/** What a ZWJ may join and stay: pictographs and their skin-tone modifiers (👩🏽‍💻). */
const EMOJI_PART = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}]$/u;

/** ZERO WIDTH JOINER, which joins the code points on either side into one emoji. */
const ZWJ = "\u200d";

/** A regional indicator (half of a flag). */
const REGIONAL_INDICATOR = /^\p{RI}$/u;

/** How far {@link cutAt} moves a cut back to keep a cluster whole, in code points; beyond that, the cluster is cut. */
const MAX_CLUSTER_BACKOFF = 32;

/** What ends a text that was cut. */
export const ELLIPSIS = "…";

/** The number of characters (Unicode code points) in `text`; a lone surrogate counts as one. */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 1; i < text.length; i++) {
    if (isLowSurrogate(text.charCodeAt(i)) && isHighSurrogate(text.charCodeAt(i - 1))) count -= 1;
  }
  return count;
}

/**
 * `text` as one line that is safe to print on a terminal: escape sequences removed,
 * other control characters (newlines and tabs included) turned into spaces,
 * bidirectional controls and every other invisible character removed ({@link INVISIBLE};
 * only a ZWJ between two parts of an emoji stays), each run of white space made one
 * space, and the ends trimmed. Then, when it is longer than `maxChars` characters, cut to `maxChars` with
 * the last one an ellipsis.
 *
 * Escape sequences are those a terminal acts on, 7-bit and 8-bit: CSI (`ESC [` or
 * 0x9B) with its parameter, intermediate and final bytes; the string commands OSC,
 * DCS, SOS, PM and APC (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`, or 0x9D, 0x90,
 * 0x98, 0x9E, 0x9F) up to BEL or ST (`ESC \` or 0x9C), or to the end of the text when
 * unterminated; any other `ESC` with its intermediate and final bytes.
 *
 * One pass over the text into a buffer, by hand: regular expressions that replace each
 * control character, like strings built piece by piece, take about a second on a
 * megabyte of alternating spaces and tabs. The pass stops once the line is sure to be
 * cut, so a short display of a long text costs little. A lone surrogate comes out as U+FFFD.
 * @param maxChars default: no limit. At least 1.
 */
export function oneLine(text: string, maxChars: number = Number.POSITIVE_INFINITY): string {
  // 2 * maxChars + 2 UTF-16 units hold at least maxChars + 1 characters: enough to know the line is cut, and where.
  const enough = Math.min(text.length, 2 * maxChars + 2);
  const out = new Uint16Array(enough + 2); // + 2: a space and a surrogate pair may be written in one step
  let length = 0;
  let spaceDue = false;
  let i = 0;
  while (i < text.length && length < enough) {
    const unit = text.charCodeAt(i);
    if (unit > 0x20 && unit < 0x7f) {
      if (spaceDue) out[length++] = 0x20;
      spaceDue = false;
      out[length++] = unit;
      i += 1;
    } else if (unit === ESC || unit === CSI_8BIT || isStringStart8Bit(unit)) {
      i = endOfEscape(text, i);
    } else if (isSpaceOrControl(unit)) {
      spaceDue = length > 0;
      i += 1;
    } else if (isBidiControl(unit)) {
      i += 1;
    } else {
      const width = codePointLength(text, i);
      if (INVISIBLE.test(text.slice(i, i + width)) && !(text[i] === ZWJ && !spaceDue && joinsEmoji(out, length, text, i + 1))) {
        i += width;
        continue;
      }
      if (spaceDue) out[length++] = 0x20;
      spaceDue = false;
      out[length++] = unit;
      if (width === 2) out[length++] = text.charCodeAt(i + 1);
      i += width;
    }
  }
  const line = UTF16.decode(out.subarray(0, length));
  if (line.length <= maxChars || characterCount(line) <= maxChars) return line;
  return `${line.slice(0, cutAt(line, maxChars - 1)).trimEnd()}${ELLIPSIS}`;
}

/** Whether a ZWJ joins two parts of an emoji: the last code point written to `out` (of `length` units) and the one at `next` in `text`. */
function joinsEmoji(out: Uint16Array, length: number, text: string, next: number): boolean {
  if (length === 0) return false;
  const last = length >= 2 && isLowSurrogate(out[length - 1]!) && isHighSurrogate(out[length - 2]!) ? 2 : 1;
  const before = String.fromCharCode(...out.subarray(length - last, length));
  return EMOJI_PART.test(before) && EMOJI_PART.test(codePointAt(text, next));
}

/** Turns the buffer of {@link oneLine} into a string in one step, in this machine's byte order. */
const UTF16 = new TextDecoder(new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? "utf-16le" : "utf-16be");

/** ESC, which starts a 7-bit escape sequence. */
const ESC = 0x1b;
/** The 8-bit CSI. */
const CSI_8BIT = 0x9b;
/** The 7-bit string commands' second characters: `]` (OSC), `P` (DCS), `X` (SOS), `^` (PM), `_` (APC). */
const STRING_STARTS_7BIT: ReadonlySet<number> = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
/** BEL, which ends an OSC. */
const BEL = 0x07;
/** The 8-bit string terminator (ST). */
const ST_8BIT = 0x9c;

/** The index after the escape sequence that starts at `start` (at ESC, the 8-bit CSI or an 8-bit string start). */
function endOfEscape(text: string, start: number): number {
  const first = text.charCodeAt(start);
  let i = start + 1;
  let isString = isStringStart8Bit(first);
  if (first === ESC) {
    const second = text.charCodeAt(i);
    if (STRING_STARTS_7BIT.has(second)) {
      isString = true;
      i += 1;
    } else if (second === 0x5b) {
      i += 1;
    } else {
      // ESC, intermediate bytes, one final byte.
      while (i < text.length && inRange(text.charCodeAt(i), 0x20, 0x2f)) i += 1;
      return i < text.length && inRange(text.charCodeAt(i), 0x30, 0x7e) ? i + 1 : i;
    }
  }
  if (isString) {
    for (; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      if (unit === BEL || unit === ST_8BIT) return i + 1;
      // ESC \ is the 7-bit ST; any other ESC ends the string and starts a sequence of its own.
      if (unit === ESC) return text.charCodeAt(i + 1) === 0x5c ? i + 2 : i;
    }
    return i;
  }
  // CSI: parameter bytes, intermediate bytes, one final byte.
  while (i < text.length && inRange(text.charCodeAt(i), 0x30, 0x3f)) i += 1;
  while (i < text.length && inRange(text.charCodeAt(i), 0x20, 0x2f)) i += 1;
  return i < text.length && inRange(text.charCodeAt(i), 0x40, 0x7e) ? i + 1 : i;
}

/** Whether the UTF-16 unit `unit` is white space as JavaScript's `\s` has it (line terminators included). */
export function isWhiteSpace(unit: number): boolean {
  return (
    inRange(unit, 0x09, 0x0d) ||
    unit === 0x20 ||
    unit === 0xa0 ||
    unit === 0x1680 ||
    inRange(unit, 0x2000, 0x200a) ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000 ||
    unit === 0xfeff
  );
}

/** White space, C0 and C1 control characters, and DEL. */
function isSpaceOrControl(unit: number): boolean {
  return unit < 0x20 || inRange(unit, 0x7f, 0x9f) || isWhiteSpace(unit);
}

/** Bidirectional controls (the Arabic letter mark, LRM and RLM, embeddings, overrides, isolates): removed, as they only reorder what is shown. */
function isBidiControl(unit: number): boolean {
  return unit === 0x061c || unit === 0x200e || unit === 0x200f || inRange(unit, 0x202a, 0x202e) || inRange(unit, 0x2066, 0x2069);
}

/** The 8-bit starts of the string commands DCS (0x90), SOS (0x98), OSC (0x9D), PM (0x9E) and APC (0x9F). */
function isStringStart8Bit(unit: number): boolean {
  return unit === 0x90 || unit === 0x98 || inRange(unit, 0x9d, 0x9f);
}

function inRange(unit: number, low: number, high: number): boolean {
  return unit >= low && unit <= high;
}

/**
 * The index in `text` (UTF-16 units) after its first `chars` code points, moved back
 * while the cut would separate a code point from what extends it (a combining mark,
 * a ZWJ sequence, an emoji modifier) or split a flag's pair of regional indicators, by
 * at most {@link MAX_CLUSTER_BACKOFF} code points.
 */
function cutAt(text: string, chars: number): number {
  let natural = 0;
  for (let counted = 0; counted < chars && natural < text.length; counted++) natural += codePointLength(text, natural);
  let index = natural;
  for (let moved = 0; moved < MAX_CLUSTER_BACKOFF && index > 0; moved++) {
    const previousIndex =
      index >= 2 && isLowSurrogate(text.charCodeAt(index - 1)) && isHighSurrogate(text.charCodeAt(index - 2)) ? index - 2 : index - 1;
    const next = codePointAt(text, index);
    const splitsCluster = next === ZWJ || extendsPrevious(next) || text[previousIndex] === ZWJ || splitsFlag(text, index);
    if (!splitsCluster) return index;
    index = previousIndex;
  }
  return natural;
}

/** Whether the code point `char` belongs to the one before it: a combining mark, an emoji modifier (skin tone) or a tag. */
function extendsPrevious(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return (code >= 0x1f3fb && code <= 0x1f3ff) || (code >= 0xe0020 && code <= 0xe007f) || COMBINING_MARK.test(char);
}

/** Whether a cut at `index` falls between the two regional indicators of one flag (an odd number of them before it). */
function splitsFlag(text: string, index: number): boolean {
  if (!REGIONAL_INDICATOR.test(codePointAt(text, index))) return false;
  let before = 0;
  for (let i = index; i >= 2 && before < MAX_CLUSTER_BACKOFF && REGIONAL_INDICATOR.test(text.slice(i - 2, i)); i -= 2) before += 1;
  return before % 2 === 1;
}

/** The code point at `index` as a string, or `""` past the end. */
function codePointAt(text: string, index: number): string {
  return index < text.length ? text.slice(index, index + codePointLength(text, index)) : "";
}

/** 2 for a surrogate pair starting at `index`, else 1. */
function codePointLength(text: string, index: number): number {
  return isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
