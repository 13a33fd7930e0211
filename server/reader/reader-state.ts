/**
 * The reader's state in its channel folder, through the store's state documents:
 * `reader-document` (the document, written once per `open_reader`) and
 * `reader-threads` (every thread and its messages, appended to by the app, and the
 * questions typed but not sent: drafts) and `reader-position` (where the person reads).
 *
 * Invariants: a message id appears at most once in a thread, so the app may record
 * the same message twice (a retried call, an answer polled again after a reload)
 * without duplicating it; a thread's passage is fixed by its first record; a thread
 * has at most one draft, written only while the thread's last message is the one the
 * draft was typed after, and dropped when a question of the thread is recorded.
 */
import { READER_DOCUMENT_STATE } from "../../protocol/channel-state.js";
import type { JsonValue } from "../../protocol/message.js";
import type { ChannelStore } from "../../store/store.js";
import type { PassageAnchor, ReaderDocument, ReaderPosition, ReaderState, ReaderThread, ThreadDraft, ThreadMessage } from "../../protocol/reader.js";
import { documentSchema, positionSchema, threadLogSchema } from "./schemas.js";
import { CallerError } from "../../core/errors.js";

/** State document that holds the threads. */
export const THREADS_STATE = "reader-threads";
/** State document that holds the reading position. */
export const POSITION_STATE = "reader-position";

/** Thrown when a state document exists but does not have the expected shape. */
export class CorruptReaderStateError extends CallerError {
  override readonly name = "CorruptReaderStateError";
  override readonly code = "CORRUPT_READER_STATE";
  constructor(channelId: string, stateName: string, detail: string) {
    super(`the reader's ${stateName} of channel ${channelId} is damaged (${detail}); open the document again with open_reader`);
  }
}

/** The document open in `channelId`, or `null` when none was opened. @throws CorruptReaderStateError */
export async function readDocument(store: ChannelStore, channelId: string): Promise<ReaderDocument | null> {
  const raw = await store.readState(channelId, READER_DOCUMENT_STATE);
  if (raw === null) return null;
  const parsed = documentSchema.safeParse(raw);
  if (!parsed.success) throw new CorruptReaderStateError(channelId, READER_DOCUMENT_STATE, parsed.error.issues[0]?.message ?? "bad shape");
  return parsed.data;
}

/**
 * Stores `document` as the channel's document. When its text differs from the one
 * stored before, the threads are dropped too: their anchors point into the old text.
 * @throws StateTooLargeError when the document is over `maxStateBytes`.
 */
export async function writeDocument(store: ChannelStore, channelId: string, document: ReaderDocument): Promise<void> {
  const previous = await store.readState(channelId, READER_DOCUMENT_STATE);
  await store.updateState(channelId, READER_DOCUMENT_STATE, () => document);
  const sameText = documentSchema.safeParse(previous).data?.text === document.text;
  if (!sameText) {
    await store.updateState(channelId, THREADS_STATE, () => ({ threads: [], drafts: [] }));
    // Block indexes of another text mean other places: back to the top.
    if ((await store.readState(channelId, POSITION_STATE)) !== null) await store.updateState(channelId, POSITION_STATE, () => ({ reset: true }));
  }
}

/** Where the person read last in `channelId`, or null (never kept, reset, or unreadable: a position is not worth an error). */
export async function readPosition(store: ChannelStore, channelId: string): Promise<ReaderPosition | null> {
  return positionSchema.safeParse(await store.readState(channelId, POSITION_STATE)).data ?? null;
}

/** Keeps `position` as where the person reads in `channelId`. */
export async function writePosition(store: ChannelStore, channelId: string, position: ReaderPosition): Promise<void> {
  await store.updateState(channelId, POSITION_STATE, () => ({ block: position.block }));
}

/** What the server tells a reader about itself, beside the channel's state (`reader_state`'s last fields). */
export type ReaderServerInfo = Pick<ReaderState, "max_message_bytes" | "browser_tab">;

/** A reader's whole state with its document's text as it is (`reader_state` may send it compressed). */
export type FullReaderState = Omit<ReaderState, "document"> & { document: ReaderDocument | null };

/**
 * All a reader of `channelId` needs to restore itself: `reader_state`'s answer, read
 * at once, and what the server tells about itself (`info`).
 * @throws CorruptReaderStateError; the store's errors (a bad channel id among them)
 */
export async function readReaderState(store: ChannelStore, channelId: string, info: ReaderServerInfo): Promise<FullReaderState> {
  const [document, { threads, drafts }, position] = await Promise.all([
    readDocument(store, channelId),
    readThreads(store, channelId),
    readPosition(store, channelId),
  ]);
  return { channel_id: channelId, document, threads, drafts, position, ...info };
}

/** The channel's threads, oldest first, and its drafts. @throws CorruptReaderStateError */
export async function readThreads(store: ChannelStore, channelId: string): Promise<ThreadLog> {
  return parseLog(channelId, await store.readState(channelId, THREADS_STATE));
}

/** The stored thread log. */
export type ThreadLog = { threads: ReaderThread[]; drafts: ThreadDraft[] };

/** What {@link recordMessage} did. */
export interface RecordOutcome {
  /** False when the thread already held a message with this id. */
  recorded: boolean;
  /** Messages in the thread afterwards. */
  messages: number;
}

/** A thread message to record, and the passage that starts the thread when it is new. */
export interface RecordRequest {
  threadId: string;
  quote: string;
  paragraph: string;
  anchor: PassageAnchor;
  message: Omit<ThreadMessage, "ts">;
  /** Remove the message instead of adding it: a question recorded before sending whose send failed. */
  withdraw?: boolean;
}

/**
 * Appends a message to a thread under the state's lock, creating the thread when it
 * is new. Idempotent by message id. With `withdraw`, removes the message instead, but
 * only while it is the thread's last one (an answer may already follow a question that
 * did reach the agent), and drops the thread when that leaves it empty.
 * @throws StateTooLargeError (nothing changed), CorruptReaderStateError.
 */
export async function recordMessage(store: ChannelStore, channelId: string, request: RecordRequest): Promise<RecordOutcome> {
  let outcome: RecordOutcome = { recorded: false, messages: 0 };
  await store.updateState(channelId, THREADS_STATE, (current) => {
    const { threads, drafts } = parseLog(channelId, current);
    if (request.withdraw) {
      const index = threads.findIndex((candidate) => candidate.thread_id === request.threadId);
      const thread = threads[index];
      const removable = thread?.messages.at(-1)?.id === request.message.id;
      if (thread && removable) thread.messages.pop();
      if (thread && thread.messages.length === 0) threads.splice(index, 1);
      outcome = { recorded: removable, messages: thread?.messages.length ?? 0 };
      return { threads, drafts };
    }
    let thread = threads.find((candidate) => candidate.thread_id === request.threadId);
    if (!thread) {
      thread = { thread_id: request.threadId, quote: request.quote, paragraph: request.paragraph, anchor: request.anchor, messages: [] };
      threads.push(thread);
    }
    const known = thread.messages.some((message) => message.id === request.message.id);
    if (!known) thread.messages.push({ ...request.message, ts: new Date().toISOString() });
    outcome = { recorded: !known, messages: thread.messages.length };
    // The question was the draft: it is sent now.
    const left = request.message.role === "user" ? drafts.filter((draft) => draft.thread_id !== request.threadId) : drafts;
    return { threads, drafts: left };
  });
  return outcome;
}

/**
 * Records the agent's `answer` (the `notify_ui` message queued as `seq`) in its thread,
 * where the reader's `reader_record` would have: same id (`ui:<seq>`), so a reader that
 * records it too changes nothing. Only into a thread the log holds (an answer names no
 * passage): a channel that is no reader's, or a thread never recorded, is left alone,
 * without a write. Idempotent by message id.
 * @returns whether the thread holds the answer now.
 * @throws StateTooLargeError (nothing changed), CorruptReaderStateError.
 */
export async function recordAnswer(
  store: ChannelStore,
  channelId: string,
  answer: { threadId: string; seq: number; text: string },
): Promise<boolean> {
  const { threads } = await readThreads(store, channelId);
  if (!threads.some((thread) => thread.thread_id === answer.threadId)) return false;
  let held = false;
  await store.updateState(channelId, THREADS_STATE, (current) => {
    const log = parseLog(channelId, current);
    const thread = log.threads.find((candidate) => candidate.thread_id === answer.threadId);
    // Gone since the read (a new document cleared the threads): stays gone.
    if (!thread) return log;
    const id = `ui:${answer.seq}`;
    if (!thread.messages.some((message) => message.id === id))
      thread.messages.push({ id, role: "agent", text: answer.text, ts: new Date().toISOString() });
    held = true;
    return log;
  });
  return held;
}

/**
 * Keeps `draft` as its thread's draft (an empty text drops it). Refused (`recorded`
 * false) when the thread's last message is not `draft.after`: a newer message came, or
 * the question the draft became was recorded first.
 * @throws StateTooLargeError (nothing changed), CorruptReaderStateError.
 */
export async function recordDraft(store: ChannelStore, channelId: string, draft: ThreadDraft): Promise<RecordOutcome> {
  let outcome: RecordOutcome = { recorded: false, messages: 0 };
  await store.updateState(channelId, THREADS_STATE, (current) => {
    const { threads, drafts } = parseLog(channelId, current);
    const messages = threads.find((thread) => thread.thread_id === draft.thread_id)?.messages ?? [];
    const upToDate = (messages.at(-1)?.id ?? null) === draft.after;
    outcome = { recorded: upToDate, messages: messages.length };
    if (!upToDate) return { threads, drafts };
    const others = drafts.filter((candidate) => candidate.thread_id !== draft.thread_id);
    return { threads, drafts: draft.text === "" ? others : [...others, draft] };
  });
  return outcome;
}

function parseLog(channelId: string, raw: JsonValue | null): ThreadLog {
  if (raw === null) return { threads: [], drafts: [] };
  const parsed = threadLogSchema.safeParse(raw);
  if (!parsed.success) throw new CorruptReaderStateError(channelId, THREADS_STATE, parsed.error.issues[0]?.message ?? "bad shape");
  return parsed.data;
}
