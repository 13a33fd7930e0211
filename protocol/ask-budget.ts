/**
 * Keeping every `ask` within the server's message limit (one rule for the reader, which
 * fits the asks it sends whole, and the server, which fits those whose history it fills
 * in, server/reader/ask-history.ts). An ask carries the thread's
 * whole history so that the agent keeps no state; a thread with long answers outgrows
 * the limit after a few turns, and a refused ask can never succeed when retried
 * because the history only grows. So the reader fits each ask before sending it:
 *
 * 1. leave out the oldest turns, one by one, keeping at least the last exchange;
 * 2. then cut the longest remaining turns short (marked with " […]");
 * 3. then cut the paragraph, then the quote.
 *
 * The question itself is never cut: a question that does not fit alone is refused
 * with the number of characters that would.
 */
import type { AskData, HistoryEntry } from "./reader.js";

/** Room kept free under the limit, for what the server adds around `data` in its own count. */
const MARGIN_BYTES = 512;
/** What marks a text that was cut short. */
const CUT = " […]";
/** Turns always kept whole when possible: the last question and its answer. */
const KEEP_LAST = 2;

/** What {@link fitAsk} made of an ask. */
export type FittedAsk =
  | {
      fits: true;
      data: AskData;
      /** Turns left out or cut short (0 when the ask went whole). */
      omitted: number;
    }
  | {
      fits: false;
      /** About how many characters the question may have. */
      maxQuestionChars: number;
    };

const encoder = new TextEncoder();
/** Bytes the cut mark adds ("…" takes three). */
const CUT_BYTES = encoder.encode(CUT).length;

/** Bytes of the JSON encoding of `value`, as the server counts them. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/**
 * Fits `ask` into `maxBytes` of JSON (the server's `max_message_bytes`). `ask.history`
 * is not changed; the fitted ask has its own. The result says how many turns were left
 * out or shortened, also set as `data.omitted`.
 */
export function fitAsk(ask: AskData, maxBytes: number): FittedAsk {
  const budget = Math.max(1024, maxBytes - MARGIN_BYTES);
  if (jsonBytes(ask) <= budget) return { fits: true, data: ask, omitted: 0 };

  const bare: AskData = { ...ask, history: [], omitted: ask.history.length };
  const bareBytes = jsonBytes(bare);
  // Each entry costs its own JSON plus a comma in the array.
  const sizes = ask.history.map((entry) => jsonBytes(entry) + 1);
  let total = bareBytes + sizes.reduce((sum, size) => sum + size, 0);
  let first = 0;
  while (total > budget && ask.history.length - first > KEEP_LAST) {
    total -= sizes[first]!;
    first += 1;
  }
  const history: HistoryEntry[] = ask.history.slice(first).map((entry) => ({ ...entry }));
  let shortened = 0;
  // Cut the longest turns first, each by what is still too much (a character is at least one byte).
  const longestFirst = [...history].sort((a, b) => b.text.length - a.text.length);
  for (const entry of longestFirst) {
    if (total <= budget) break;
    const before = jsonBytes(entry);
    entry.text = cutText(entry.text, entry.text.length - (total - budget) - CUT_BYTES);
    total += jsonBytes(entry) - before;
    shortened += 1;
  }
  let data: AskData = { ...ask, history, omitted: first + shortened };
  if (jsonBytes(data) > budget) {
    // The history alone cannot make room: drop it, then cut the paragraph and the quote.
    data = { ...data, history: [], omitted: ask.history.length };
    const room = (field: "paragraph" | "quote") => Math.max(0, data[field].length - (jsonBytes(data) - budget) - CUT_BYTES);
    if (jsonBytes(data) > budget) data = { ...data, paragraph: cutText(data.paragraph, room("paragraph")) };
    if (jsonBytes(data) > budget) data = { ...data, quote: cutText(data.quote, room("quote")) };
  }
  if (jsonBytes(data) > budget) {
    const overhead = jsonBytes({ ...data, question: "" });
    // A character takes at most 6 bytes of JSON (an escaped control character); most take 1 to 3.
    return { fits: false, maxQuestionChars: Math.max(0, Math.floor((budget - overhead) / 3)) };
  }
  return { fits: true, data, omitted: data.omitted ?? 0 };
}

/** `text` cut to at most `chars` characters (never inside a surrogate pair), marked as cut. */
function cutText(text: string, chars: number): string {
  if (text.length <= chars) return text;
  let end = Math.max(0, chars);
  if (end === 0) return CUT.trim();
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + CUT;
}
