/**
 * The reader's wire shapes (docs/reader.md) and its stored state. Types only: the app
 * imports them with `import type`, so no server code ever reaches the browser bundle.
 * Stored shapes are type aliases, not interfaces, so that they are plain JSON values to the store.
 */

/** Who wrote a message of a thread. */
export type ThreadRole = "user" | "agent";

/** One turn of a thread, as `ask.history` carries it. */
export interface HistoryEntry {
  role: ThreadRole;
  text: string;
}

/** Where a thread's passage sits: character offsets into the text of one block of the rendered document. */
export type PassageAnchor = {
  /** Index of the block (paragraph, list item, heading, …) in document order, from 0. */
  block: number;
  /** Offset of the passage's first character in the block's text. */
  start: number;
  /** Offset just past the passage's last character. */
  end: number;
};

/** `ready` (app → agent): the reader has loaded and restored itself. */
export type ReadyData = Record<string, never>;

/** `hello` (agent → app): the agent is listening. */
export type HelloData = Record<string, never>;

/** `ask` (app → agent): everything the agent needs to answer, so it keeps no state between turns. */
export interface AskData {
  thread_id: string;
  /** The highlighted passage. */
  quote: string;
  /** The whole paragraph around it. */
  paragraph: string;
  question: string;
  /** The thread's earlier turns, oldest first (empty for a first question). */
  history: HistoryEntry[];
  /**
   * How many of the thread's earliest turns were left out of `history` (or cut short) so
   * that the ask fits in one message; absent or 0 when the history is whole.
   */
  omitted?: number;
}

/**
 * An `ask` as the reader may send it: instead of `history`, which the server already
 * holds in the thread's record, `history_ref` names it (how many turns, and their
 * {@link historyDigest}). The server fills the history in from its record when the
 * digest matches, so the agent gets a plain {@link AskData}; when it does not (a turn
 * not recorded yet, a record lost), the send is refused with `HISTORY_MISMATCH` and
 * the reader sends the whole history. A host that logs every message it relays then
 * never carries a long thread again with each follow-up.
 */
export type AskBySend = Omit<AskData, "history"> & { history: []; history_ref: HistoryRef };

/** Which history an ask means: the thread's first `turns` messages, whose {@link historyDigest} is `digest`. */
export type HistoryRef = { turns: number; digest: string };

/** `answer` (agent → app): markdown, rendered with raw HTML off. */
export interface AnswerData {
  thread_id: string;
  text: string;
}

/** `status` (agent → app): an ambient line that replaces the previous one, shown until `until` (ISO-8601) when given. */
export interface StatusData {
  text: string;
  until?: string;
}

/** The document open in a channel's reader (state document `reader-document`). */
export type ReaderDocument = {
  title: string;
  format: "markdown" | "text";
  text: string;
  words: number;
  /** ISO-8601 time it was opened. */
  opened_at: string;
  /**
   * `hook` when the agent that opened it is woken by the plugin's wake hook for every
   * message of the channel (`serve --wake hook`): it listens from the open on, before
   * any `hello` or answer. Absent for the other wake paths, whose agent must act first.
   */
  woken_by?: "hook";
};

/** A stored message of a thread. `id` makes recording idempotent: an agent answer's id is `ui:<seq>`. */
export type ThreadMessage = {
  id: string;
  role: ThreadRole;
  text: string;
  ts: string;
};

/** One thread: a passage and the conversation about it. */
export type ReaderThread = {
  thread_id: string;
  quote: string;
  paragraph: string;
  anchor: PassageAnchor;
  messages: ThreadMessage[];
};

/**
 * A question typed in a card but not sent, kept so that it survives a reload: in the
 * thread `thread_id` (a new one when no message of it is recorded yet, on `anchor`).
 * `after` is the id of the thread's last message when it was typed (`null` before any):
 * a draft written after a newer message is refused, and recording a question drops it.
 */
export type ThreadDraft = {
  thread_id: string;
  quote: string;
  paragraph: string;
  anchor: PassageAnchor;
  text: string;
  after: string | null;
};

/**
 * The document as `reader_state` carries it: the stored one, with its text as it is, or,
 * when the reader asked with `gzip: true`, gzip-compressed and base64-encoded in
 * `text_gzip` instead. A host that logs every message it relays re-renders them all for
 * each new one (MCP Inspector's Messages panel, docs/ARCHITECTURE.md "Hosts"): the document is by far the
 * largest, and compressed it is a third of the size or less.
 */
export type ReaderStateDocument = Omit<ReaderDocument, "text"> & ({ text: string; text_gzip?: never } | { text_gzip: string; text?: never });

/**
 * Where the person reads (state document `reader-position`): the index of the block at
 * the top of the reader, so that a re-rendered reader scrolls back there. It lives in the
 * channel, not in web storage, which a sandboxed reader's opaque origin refuses and which
 * would keep it in one browser only.
 */
export type ReaderPosition = { block: number };

/** What `reader_state` returns: all a re-rendered reader needs to restore itself. */
export interface ReaderState {
  channel_id: string;
  document: ReaderStateDocument | null;
  threads: ReaderThread[];
  /** Questions typed but not sent, one per thread at most. */
  drafts: ThreadDraft[];
  /** Where the person read last; null before they scrolled, or when the document's text changed since. */
  position: ReaderPosition | null;
  /** The largest JSON encoding of one message's data the server accepts: every `ask` must fit in it. */
  max_message_bytes: number;
  /** Whether the server can show the channel in a browser tab (its browser host, on the person's machine): the reader offers to only then. */
  browser_tab?: boolean;
}

/**
 * The reader's state as the browser host puts it in the reader's frame, ahead of the
 * reader's script (web/ahead-frame.ts): `reader_state`'s answer, but for the document's
 * text, which is already rendered in the reader's `#doc`.
 */
export type AheadReaderState = Omit<ReaderState, "document"> & { document: Omit<ReaderDocument, "text"> };

/** The id of the `<script type="application/json">` element that holds an {@link AheadReaderState} in the reader's HTML. */
export const AHEAD_STATE_ELEMENT = "reader-ahead-state";
