/**
 * The message the reader puts into the chat (`ui/message`): by the no-agent button, or
 * by itself where the chat sends it at once (chat-delivery.ts). It shows in the chat as
 * the person's message (in most chats in the input box, before they send it), so it
 * reads as their own words; the part in brackets tells the agent that the same question
 * already waits in the reader, so that it answers there, once (the margin-comments recipe
 * says the same).
 *
 * Where the chat sends it at once (`sends`), nobody reads it before the model does, and
 * the model takes it for the person's words: it then holds the person's questions and
 * the channel only, never the document's text (its title or the passage), which could
 * otherwise speak to the model as the person. The agent reads the passage from the ask.
 */
import type { ChatDelivery } from "./chat-delivery.js";

/** One waiting question. */
export interface WaitingQuestion {
  threadId: string;
  quote: string;
  question: string;
}

/** Characters of a quote in the message. */
const QUOTE_CHARS = 200;

/** The text for a chat that does `delivery` with it: the questions, then where the agent answers them. */
export function chatMessage(title: string, channelId: string, questions: WaitingQuestion[], delivery: ChatDelivery): string {
  const quote = (text: string) => (text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text);
  const lines = questions.map((item) =>
    delivery === "sends" ? `Asked in the reader: ${item.question}` : `About “${quote(item.quote)}” in “${title}”: ${item.question}`,
  );
  const threads = questions.map((item) => item.threadId).join(", ");
  const one = questions.length === 1;
  lines.push(
    "",
    `(${one ? "This question waits" : "These questions wait"} in the reader too, on channel ${channelId} (thread ${threads}). ` +
      `Please answer ${one ? "it" : "them"} there, beside the passage, and only once.)`,
  );
  return lines.join("\n");
}
