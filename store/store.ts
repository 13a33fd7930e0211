/**
 * The store interface the tools are written against (docs/ARCHITECTURE.md, "The store").
 * The file store is the embedded default; any other store implements the same
 * interface, and the tools, the awareness layer and the watcher work over it unchanged.
 *
 * Two views:
 * - {@link ChannelReader}: read-only (peek, watch, session records). It never takes a
 *   lock, never writes and never repairs, so the watcher and the status line can use
 *   it beside running servers without disturbing them;
 * - {@link ChannelStore}: everything, for the server.
 */
import type { Limits } from "../core/limits.js";
import type { QueueName } from "../core/paths.js";
import type { JsonValue, QueueMessage } from "../protocol/message.js";
import type { SessionRecord } from "./session-record.js";
import type { SavedAppStore } from "./saved-app.js";

/** What an append returns: the message's `seq` and how many messages now wait in the queue. */
export interface AppendResult {
  seq: number;
  pending: number;
}

/** Options of {@link ChannelStore.poll}. */
export interface PollOptions {
  /**
   * The cursor: the highest seq the caller has received. It acknowledges every message
   * with `seq <= after` for the caller's {@link reader}; a message is deleted once every
   * reader of the queue seen within the lease has acknowledged it (./readers.ts), so two
   * readers of one queue each receive every message. Those with `seq > after` are
   * returned and kept until a later poll passes a cursor past them (at-least-once).
   * Without it, the poll reads and clears (at-most-once), whatever other readers hold.
   * A cursor above the last seq the queue handed out (a hostile caller, or a reader of a
   * queue that was deleted) changes nothing: no message is deleted, no seq moves, and
   * the poll returns the queue's messages from its start.
   */
  after?: number;
  /**
   * Who reads (READER_ID_PATTERN, core/ids.ts): a token the caller chose once (an app,
   * once per page load), so that its cursor is kept apart from other readers' of the
   * same queue. Without it, the poll is the one shared default reader, as any caller
   * from before readers were kept: alone on a queue, a cursor deletes up to itself.
   */
  reader?: string;
  /**
   * The epoch `after` came from (../protocol/epoch.ts): the `epoch` of the poll that gave
   * the cursor. When the queue's epoch is another, the cursor belongs to a queue that is
   * gone: nothing is deleted, and the poll returns the queue's messages from its start.
   * Without it, `after` is taken as it is.
   */
  epoch?: string;
  /** When nothing is pending, wait up to this long for a message to land. Default 0. */
  waitMs?: number;
  /** Ends a wait early (the poll then returns what it has, possibly nothing). */
  signal?: AbortSignal;
  /** Called once when the poll found nothing and starts to wait (only with `waitMs > 0`). */
  onWaiting?: () => void;
}

/** What a poll returns. */
export interface PollResult {
  /** The messages, in seq order. */
  messages: QueueMessage[];
  /**
   * The cursor to pass as `after` next time: the last seq returned, else the one given;
   * below the one given when that was above the last seq handed out (then the last seq
   * returned, else the last seq handed out).
   */
  cursor: number;
  /** Messages still waiting after this poll (more than one poll returns at once). */
  pending: number;
  /**
   * The queue's epoch (../protocol/epoch.ts): pass it with `cursor` next time. A reader
   * that keeps a seq sees a new one when the queue was started again (its seqs begin
   * again): it forgets its seq and takes the messages from the start.
   */
  epoch: string;
  /**
   * Set (true) when messages after the cursor were deleted before this reader read them:
   * it was not seen for the lease (or its record was dropped) while other readers
   * acknowledged them, or its epoch is gone and the new one already deleted some. The
   * reader should reload what it shows from its app's state, then go on from `cursor`.
   * Told only to a poll that gives a {@link PollOptions.reader} and an `epoch`.
   */
  missed?: true;
}

/** What waits in a queue and the epoch its seqs belong to, read together. */
export interface QueueSnapshot {
  messages: QueueMessage[];
  /** The queue's epoch (../protocol/epoch.ts); `NO_EPOCH` for a queue that does not exist. */
  epoch: string;
}

/** Why {@link ChangeSubscription.next} returned. */
export type WakeReason = "changed" | "timeout" | "aborted";

/**
 * A subscription to changes of one thing in a store (a queue, a session record). Close it
 * when done. Changes are a hint: re-read after any wake-up, including a timeout. Waiters
 * use it through {@link changes} in ./changes.ts.
 */
export interface ChangeSubscription {
  /**
   * Resolves with `"changed"` once the watched thing changed since the last call (or
   * since the subscription began), `"timeout"` after `maxMs`, `"aborted"` when `signal` aborts.
   */
  next(maxMs: number, signal?: AbortSignal): Promise<WakeReason>;
  /** Stops listening. */
  close(): void;
}

/**
 * The records of host sessions, read-only. Every method throws Error for a key that does
 * not match SESSION_KEY_PATTERN (core/ids.ts).
 */
export interface SessionReader {
  /** The record of session `key`; an empty one for a session never written or unreadable. */
  read(key: string): Promise<SessionRecord>;
  /** Subscribes to changes of a session record (its wall, its channels). */
  watch(key: string): ChangeSubscription;
}

/** The records of host sessions (see ./session-record.ts). */
export interface SessionStore extends SessionReader {
  /**
   * Changes a session record atomically, as {@link ChannelStore.updateState} does a state document.
   * @returns the new record.
   * @throws LockTimeoutError, whatever `update` throws (nothing changed then).
   */
  update(key: string, update: (current: SessionRecord) => SessionRecord): Promise<SessionRecord>;
}

/**
 * A read-only view of a store: what waits in a queue, and the session records. Every
 * method validates the channel id first and throws `InvalidChannelIdError` for a bad one.
 */
export interface ChannelReader {
  /**
   * The messages waiting in a queue, changing nothing (no lock taken, nothing repaired).
   * @returns none for a channel or queue that does not exist.
   * @throws CorruptQueueFileError when the queue cannot be read as one (the server
   *   repairs it at its next write); I/O errors.
   */
  peek(channelId: string, queue: QueueName): Promise<QueueMessage[]>;
  /**
   * {@link peek} with the queue's epoch, read at the same instant: for a reader that keeps
   * a seq between reads (the watchers), which must forget it when the epoch changes.
   * @throws as {@link peek}.
   */
  snapshot(channelId: string, queue: QueueName): Promise<QueueSnapshot>;
  /**
   * Whether the channel has been made (opened, or written to) and not removed since.
   * @throws I/O errors; StoreUnavailableError over Redis.
   */
  hasChannel(channelId: string): Promise<boolean>;
  /**
   * Every channel in the store (or view), with when it was last used.
   * @throws UnsafeLayoutError (file store); I/O errors; StoreUnavailableError over Redis.
   */
  listChannels(): Promise<ChannelInfo[]>;
  /** Subscribes to changes of a queue (subscribe, then {@link peek}); works before the channel exists. */
  watchQueue(channelId: string, queue: QueueName): ChangeSubscription;
  /**
   * How often a waiter reads again although no change was signalled, in ms: as often as
   * a change could go unsignalled (a file-system event can be missed; a Redis wake-up
   * cannot while connected, and every waiter is woken when the connection comes back).
   */
  readonly fallbackWakeMs: number;
  /**
   * Reads a per-channel state document (an app's own data, e.g. the reader's document),
   * changing nothing: a writer replaces a document whole, so it is read whole.
   * @returns `null` when there is none, or what is in its place is not one (a writer repairs it).
   * @throws InvalidChannelIdError, Error for a bad name; I/O errors; StoreUnavailableError over Redis.
   */
  readState(channelId: string, name: string): Promise<JsonValue | null>;
  /** The host sessions' records. */
  readonly sessions: SessionReader;
}

/** A channel and when it was last written. */
export interface ChannelInfo {
  id: string;
  lastActivity: Date;
}

/**
 * A store of channels, each with a `ui` queue (agent → app) and an `agent` queue (app → agent).
 * Every method validates the channel id first and throws `InvalidChannelIdError` for a bad one.
 */
export interface ChannelStore extends ChannelReader {
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  /**
   * Appends a message to a queue. Its seq is the queue's last plus one, from 1, and never
   * handed out twice in the queue's epoch (../protocol/epoch.ts), not even after it drains
   * or is repaired. Past a limit (../core/limits.ts) it is refused and nothing queued is dropped.
   * @throws InvalidEventError, InvalidDataError, MessageTooLargeError, QueueFullError, LockTimeoutError, I/O errors.
   */
  append(channelId: string, queue: QueueName, event: string, data?: JsonValue): Promise<AppendResult>;
  /**
   * Reads a queue with a cursor or read-and-clear, optionally waiting for a message.
   * @throws InvalidCursorError (a bad cursor or epoch), LockTimeoutError, I/O errors.
   */
  poll(channelId: string, queue: QueueName, options?: PollOptions): Promise<PollResult>;
  /**
   * Changes a state document atomically: `update` gets the current value (or `null`)
   * under the document's lock and returns the new one, which replaces it.
   * @returns the new value.
   * @throws StateTooLargeError (nothing changed), LockTimeoutError, whatever `update` throws.
   */
  updateState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue>;
  /** The host sessions' records (their channels and walls), kept beside the channels. */
  readonly sessions: SessionStore;
  /** The apps the user kept (see ./saved-app.ts), kept beside the channels. */
  readonly apps: SavedAppStore;
  /** Removes a channel and everything in it; does nothing when it does not exist. */
  remove(channelId: string): Promise<void>;
  /**
   * Removes channels idle for longer than the channel TTL, never one holding unread
   * messages or in use, and session records idle as long.
   * @param now the current time, for a store that judges idleness by this process's
   *   clock; the file store judges it by its file system's clock and takes none.
   * @returns the ids of the channels removed.
   */
  removeIdleChannels(now?: number): Promise<string[]>;
  /**
   * The same store as principal `namespace` sees it (docs/ARCHITECTURE.md, "Remote
   * serving"): channels, sessions, state documents and saved apps of its own, apart from
   * the store's own and every other principal's, so that the same channel id names a
   * different channel for each. Limits and connections are shared with this store. A
   * view's own `forPrincipal` gives the same as the store's. A principal that only reads
   * makes nothing in the store, and the idle sweep covers every principal's channels.
   * @param namespace 32 lower-case hex digits (server/auth/principal.ts).
   * @throws Error for a namespace that does not match PRINCIPAL_NAMESPACE_PATTERN (core/ids.ts);
   *   UnsafeLayoutError (file store) when the principal's folder is unsafe.
   */
  forPrincipal(namespace: string): ChannelStore;
  /**
   * Roughly how many bytes this store (or view) holds: queued messages, state documents
   * and saved apps, as stored. For the principal limits (./principal-limits.ts).
   */
  usedBytes(): Promise<number>;
  /** The namespaces of the principals that have data in the store, for the idle sweep. */
  listPrincipals(): Promise<string[]>;
}
