/**
 * The readers of one queue (docs/ARCHITECTURE.md, "Channels"): several apps may read one
 * channel's `ui` queue at once (the in-chat reader and its browser tab, an app open on
 * two screens), each with a cursor of its own. A poll with a cursor records its
 * reader's cursor and when it was seen; a message is deleted only once every reader
 * seen within {@link READER_LEASE_MS} has acknowledged it, so no reader takes a message
 * away from another. The file store keeps the records beside its queue's mark
 * (./file/queue-log.ts), the Redis store in the channel's meta hash (./redis/scripts.ts,
 * which implements the same rules in Lua); both under the queue's lock, in the same
 * change as the acknowledgement.
 *
 * Invariants:
 * - a message is deleted by a cursor only when it is at or below the cursor of every
 *   reader whose record is live (seen within the lease), the caller's own included;
 *   a poll without a reader id is the reader {@link DEFAULT_READER}, so a queue with one
 *   reader behaves as before readers were kept (a cursor acknowledges up to itself);
 * - a reader not seen for the lease holds nothing back, so a reader that went away
 *   blocks neither deletion nor, for longer than the lease and one poll of another
 *   reader, an append to a full queue;
 * - a reader whose messages were deleted before it read them (its record lapsed, was
 *   dropped for {@link MAX_READERS}, or was lost with a torn file) is told: its poll
 *   says `missed` (./store.ts `PollResult`), so it reloads its state instead of
 *   silently lacking them. Losing the records can only cause such a reload, never a
 *   silent loss: what a reader missed is judged from the queue, which is the truth.
 */
import { READER_ID_PATTERN } from "../core/ids.js";

/**
 * How long a reader's record holds messages back after its last poll. A reader
 * long-polls for at most 30 s (`maxUiWaitMs`) and polls again at once, so a live reader
 * is seen at least every 30 s and a round trip; two minutes lets it miss three polls (a
 * slow host, a tab the browser throttles) before it stops holding messages back.
 */
export const READER_LEASE_MS = 120_000;

/**
 * A reader's record is written again when its cursor moves, or when it is older than
 * this: a reader that waits with nothing new writes about once per long-poll.
 */
export const READER_RENEW_MS = READER_LEASE_MS / 4;

/**
 * The most readers a queue keeps records of; a new one drops the one seen longest ago,
 * which is told `missed` should the others trim past it. Bounds what a caller that
 * mints reader ids at will can make the store keep.
 */
export const MAX_READERS = 16;

/** The reader of a poll that names none (any older caller): one shared record, which no chosen id can name (it does not match READER_ID_PATTERN). */
export const DEFAULT_READER = "~";

/** One reader's record: its cursor and when it was last seen (ms since the epoch, by the store's clock). */
export interface ReaderCursor {
  seq: number;
  seen: number;
}

/** The records of a queue's readers, by reader id. */
export type ReaderCursors = Readonly<Record<string, ReaderCursor>>;

/** Whether `value` is a reader id a caller may choose (READER_ID_PATTERN). */
export function isReaderId(value: unknown): value is string {
  return typeof value === "string" && READER_ID_PATTERN.test(value);
}

/** A poll with a cursor, as {@link planRead} needs it. */
export interface ReadRequest {
  /** The reader's id; {@link DEFAULT_READER} for a poll that names none. */
  reader: string;
  /** The reader's cursor in the queue's epoch: `after`, or 0 when it names no seq of this epoch (another epoch, or above every seq handed out). */
  after: number;
  /** False when the cursor names no seq of this epoch: the poll then acknowledges nothing. */
  acknowledges: boolean;
  /** The highest seq no longer kept below the queue's first message: its first seq - 1, or, empty, the last seq handed out (0: none). */
  floor: number;
  /** Now, by the store's clock. */
  now: number;
  /**
   * Whether the reader can be told it missed messages: it named itself and gave the
   * epoch its cursor came from. A first poll (no epoch yet) starts where the queue is.
   */
  judged: boolean;
}

/** What a poll with a cursor does to a queue's readers. */
export interface ReadPlan {
  /** The records to write, or `null` when they need no write (the caller's is current and fresh). */
  readers: ReaderCursors | null;
  /** Delete every message with seq <= this (0: none). */
  trimTo: number;
  /** Messages after the reader's cursor were deleted before it read them. */
  missed: boolean;
}

/**
 * What a poll with a cursor does (see the top of this module): whether its reader missed
 * messages (judged from its record as it was before this poll), its record written,
 * lapsed records dropped, and how far the queue may be trimmed.
 */
export function planRead(current: ReaderCursors, request: ReadRequest): ReadPlan {
  const { reader, after, acknowledges, floor, now, judged } = request;
  const own = current[reader];
  const held = own !== undefined && isLive(own, now) && own.seq <= after;
  const missed = judged && floor > after && !held;
  // A cursor that names no seq of this epoch holds everything still kept.
  const seq = acknowledges ? after : floor;
  const live = Object.entries(current).filter(([id, record]) => id !== reader && isLive(record, now));
  const dropped = live.length < Object.keys(current).length - (own ? 1 : 0) || live.length > MAX_READERS - 1;
  const stale = own === undefined || own.seq !== seq || now - own.seen >= READER_RENEW_MS || dropped;
  live.sort(([, a], [, b]) => b.seen - a.seen);
  const kept = [...live.slice(0, MAX_READERS - 1), [reader, { seq, seen: now }] as const];
  const trimTo = acknowledges ? Math.min(...kept.map(([, record]) => record.seq)) : 0;
  return { readers: stale ? Object.fromEntries(kept) : null, trimTo, missed };
}

/** Whether `record` still holds messages back at `now`. */
function isLive(record: ReaderCursor, now: number): boolean {
  return now - record.seen < READER_LEASE_MS;
}

/** The records in `text` (as {@link formatReaders} writes them); none when it is not such a text (a torn or foreign file: see the top of this module). */
export function parseReaders(text: string): ReaderCursors {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  const readers: Record<string, ReaderCursor> = {};
  for (const [id, record] of Object.entries(value as Record<string, unknown>)) {
    if (!(isReaderId(id) || id === DEFAULT_READER) || !Array.isArray(record) || record.length !== 2) continue;
    const [seq, seen] = record as unknown[];
    if (Number.isSafeInteger(seq) && (seq as number) >= 0 && Number.isSafeInteger(seen)) readers[id] = { seq: seq as number, seen: seen as number };
  }
  return readers;
}

/** `readers` as one line of text, `{"<id>":[seq,seen],…}`. */
export function formatReaders(readers: ReaderCursors): string {
  return `${JSON.stringify(Object.fromEntries(Object.entries(readers).map(([id, { seq, seen }]) => [id, [seq, seen]])))}\n`;
}
