/**
 * A scripted model for the reader in mcp-use's chat that acts only on what the page
 * shows it: the person's messages, the tools it declares, and tool results (the text,
 * then `structuredContent: <JSON>` as the page appends it). The page gives it no server
 * instructions and no shell, so it follows the words it is shown:
 *
 * - a message asking to open a document in the reader → `open_reader`; its result names
 *   the channel; the turn ends (it cannot run the background command the result names);
 * - a message that says a question waits "on channel <id>" (what the reader puts into
 *   the chat) → `poll_agent_messages` on that channel, as the margin-comments recipe
 *   says; each `ask` it reads → `notify_ui` `answer` in one reply (`ready` → `hello`);
 *   then a short line in the chat. A poll with no ask ends the turn: answered already.
 *
 * A test may hold a turn after its poll (`hold`), to keep the chat busy while the person
 * asks more in the reader.
 */
import type { Action, ChatPolicy, ChatTurn } from "./model-server.js";

/** An ask the model answered. */
export interface Answered extends Ask {
  /** The answer's text: unique per ask. */
  text: string;
  /** The index of the turn that answered it. */
  turn: number;
}

/** What the model did, for the test to check. */
export interface ReaderChat {
  policy: ChatPolicy;
  /** Resolves with the channel once open_reader has answered. */
  opened: Promise<string>;
  /** Every ask answered, in order. */
  answered: Answered[];
  /** The turns a message from the reader started: `performance.now()` of their first request, and the message. */
  rings: { at: number; text: string; turn: number }[];
  /** Polls that found no ask. */
  emptyPolls: number;
}

/** Options of {@link readerChatPolicy}. */
export interface ReaderChatOptions {
  /** The document open_reader shows. */
  markdown: string;
  title: string;
  /** Called with the asks a poll read, before the model answers them; the turn waits for it. */
  hold?: (asks: Ask[], turn: ChatTurn) => Promise<void> | void;
  /** The answer to `ask`, the `number`th (1 first). Default "Answer <number>, to “<question>”.": unique per ask. */
  answer?: (ask: Ask, number: number) => string;
}

/** An ask as the model read it. */
export interface Ask {
  threadId: string;
  question: string;
  quote: string;
}

interface PolledMessage {
  seq: number;
  event: string;
  data: { thread_id?: unknown; question?: unknown; quote?: unknown };
}

/** The policy, and what it records. */
export function readerChatPolicy(options: ReaderChatOptions): ReaderChat {
  let resolveOpened!: (channelId: string) => void;
  const chat: ReaderChat = {
    policy: () => undefined,
    opened: new Promise((resolve) => (resolveOpened = resolve)),
    answered: [],
    rings: [],
    emptyPolls: 0,
  };
  chat.policy = async (turn) => {
    const opened = turn.result("open_reader");
    if (opened) {
      const channelId = structuredOf<{ channel_id?: string }>(opened.text).channel_id;
      if (!channelId) throw new Error(`open_reader named no channel: ${opened.text.slice(0, 300)}`);
      resolveOpened(channelId);
      return { text: "The reader is open: highlight a passage and ask me there." };
    }
    const polled = turn.result("poll_agent_messages");
    if (polled) {
      const channelId = (polled.input as { channel_id: string }).channel_id;
      const messages = structuredOf<{ messages?: PolledMessage[] }>(polled.text).messages ?? [];
      const asks = messages.flatMap((message) =>
        message.event === "ask" && typeof message.data.thread_id === "string" && typeof message.data.question === "string"
          ? [{ threadId: message.data.thread_id, question: message.data.question, quote: String(message.data.quote ?? "") }]
          : [],
      );
      await options.hold?.(asks, turn);
      const replies: Action[] = messages.some((message) => message.event === "ready")
        ? [{ tool: "notify_ui", input: { channel_id: channelId, event: "hello", data: {} } }]
        : [];
      for (const ask of asks) {
        const number = chat.answered.length + 1;
        const text = options.answer?.(ask, number) ?? `Answer ${number}, to “${ask.question}”.`;
        chat.answered.push({ ...ask, text, turn: turn.index });
        replies.push({ tool: "notify_ui", input: { channel_id: channelId, event: "answer", data: { thread_id: ask.threadId, text } } });
      }
      if (asks.length === 0) chat.emptyPolls += 1;
      return replies.length > 0 ? replies : { text: "That question was answered already, in the reader." };
    }
    if (turn.result("notify_ui")) return { text: "I answered in the reader, beside the passage." };
    const text = turn.userText;
    const waiting = /on channel ([A-Za-z0-9_-]+)/.exec(text);
    if (waiting) {
      chat.rings.push({ at: turn.at, text, turn: turn.index });
      return { tool: "poll_agent_messages", input: { channel_id: waiting[1] } };
    }
    if (/\breader\b/i.test(text)) return { tool: "open_reader", input: { title: options.title, markdown: options.markdown } };
    return { text: "Ask me to open a document in the reader." };
  };
  return chat;
}

/**
 * The `structuredContent` the page appended to a tool result's text.
 * @throws when there is none (the model would have nothing to read).
 */
export function structuredOf<T>(text: string): T {
  const marker = "structuredContent: ";
  const at = text.lastIndexOf(marker);
  if (at < 0) throw new Error(`the result shows no structuredContent: ${text.slice(0, 300)}`);
  return JSON.parse(text.slice(at + marker.length)) as T;
}
