/**
 * What the reader says to a person. Errors from the host or the server are written for
 * developers ("message too large: its data is … bytes of JSON"); a person gets a
 * sentence that says what happened and what to do, and the developer's text goes to
 * the console.
 */
import type { ChatDelivery } from "./chat-delivery.js";

/** Words for an elapsed time: "12 s", "3 min", "2 h". */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.round(minutes / 60)} h`;
}

/** What the person reads when a question could not be sent; the cause goes to the console. */
export function notSent(error: unknown): string {
  console.warn("backchannel reader: a question was not sent:", error);
  return "Your question did not reach the agent (the connection failed). It is back in the box: press Enter to send it again.";
}

/** What the person reads when a question or answer could not be saved for later visits. */
export function notSaved(error: unknown): string {
  console.warn("backchannel reader: a message was not saved:", error);
  return "This conversation could not be saved, so it may be missing when the chat is opened again.";
}

/** What the person reads when the document could not be loaded. */
export function notLoaded(error: unknown): string {
  console.warn("backchannel reader: the document did not load:", error);
  return "The document could not be loaded. Close the chat and open it again; if that does not help, ask the agent to open the document again.";
}

/** What the person reads when a question is too long to send at all. */
export function tooLong(maxChars: number): string {
  return `This question is too long to send. Shorten it to about ${maxChars.toLocaleString()} characters.`;
}

/** The note on a card whose earlier turns were left out or shortened so that the question fits. */
export function trimmedNote(omitted: number): string {
  return `The conversation has grown long: the agent sees only its latest part (${omitted} earlier message${omitted === 1 ? " was" : "s were"} left out or shortened).`;
}

/** What a card waiting for an answer adds once its question was put into a chat that does `delivery` with it. */
export function forwardedNote(delivery: ChatDelivery): string {
  return delivery === "sends" ? " · sent to the agent in the chat" : " · also put in the chat: send it there to wake the agent";
}

/**
 * The Ask button's label for a selection of `text`: "this sentence" when it is one whole
 * sentence of its paragraph (`sentence`), else "this word", "these words" (up to
 * {@link FEW_WORDS}) or "this passage"; `key` adds the key that asks, for the keyboard route.
 */
export function askLabel(text: string, sentence: boolean, key: boolean): string {
  const words = text
    .trim()
    .split(/\s+/u)
    .filter((word) => word !== "").length;
  const what = sentence ? "this sentence" : words <= 1 ? "this word" : words <= FEW_WORDS ? "these words" : "this passage";
  return `Ask about ${what}${key ? " (Enter)" : ""}`;
}

/** Up to this many selected words are "these words"; more are "this passage". */
const FEW_WORDS = 6;
