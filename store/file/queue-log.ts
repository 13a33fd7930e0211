/**
 * The operations on one queue log (./log-format.ts) that a server makes: append, read
 * with a cursor, read and clear. Each change happens under the queue's lock and is
 * durable before its caller hears of it.
 *
 * An append does the same few steps whatever the queue holds: take the lock, read the
 * queue's mark (./queue-mark.ts) and check it against the log's lstat, check the limits,
 * append one line (./log-append.ts), write the mark, release the lock, fdatasync. The log
 * is read whole only when its mark does not describe it ({@link queueState}, which also
 * repairs it). Reads parse the log (they return its messages), and compaction is done by
 * their acknowledgements, never by an append.
 *
 * Invariants:
 * - every change to a queue file happens under its lock: one appended line (a message
 *   or an ack), or an atomic replacement (compaction, a fresh queue after
 *   corruption, a queue raised above its mark); a reader without the lock acts only on
 *   whole lines of whole files;
 * - every change to the log is followed, under the same lock, by its mark's; a change
 *   whose mark is not written (a crash, a failed write) leaves a mark that no longer
 *   describes the log, so the next writer reads the log whole;
 * - an append or an ack is durable (fdatasync) before its caller hears of it; the sync
 *   runs after the lock is released, so that writers share journal commits;
 * - `seq` never repeats in a queue: `next_seq` only grows and is kept when the queue
 *   drains; every seq handed out is recorded in the queue's mark, and a queue file whose
 *   `next_seq` is not above its mark (put back from an older copy) goes on above the
 *   mark, keeping every message it holds; a queue restarted after corruption starts
 *   above every seq it may have handed out;
 * - a cursor moves nothing but acknowledgements up to itself, and never past the last
 *   seq handed out: a cursor above it (a hostile caller, or a reader of a queue that was
 *   deleted) acknowledges nothing and gets the queue's messages from its start;
 * - a log started from nothing (no file, or an empty one), or again after corruption,
 *   gets a new epoch (../../protocol/epoch.ts); every rewrite of a log keeps its epoch.
 *   A cursor of another epoch than the log's acknowledges nothing and gets the queue's
 *   messages from its start, whatever its number;
 * - a write refused for a limit changes nothing already queued;
 * - acknowledging needs no free room: a read that acknowledges and fails for lack of
 *   room runs once more on the data directory's space reserve (./space-reserve.ts),
 *   which only acknowledgements use; a compaction that finds no room on the disk
 *   appends the record instead (the log is compacted by a later write); and with no
 *   reserve left, a read with a cursor whose acknowledgement cannot be written at all
 *   (nor its lock taken) still returns the messages after the cursor, acknowledging
 *   nothing: they stay in the log, and the next read with a cursor acknowledges them.
 *   Nothing is lost and no seq repeats; only a read-and-clear, which must delete what
 *   it returns, fails when neither the disk nor the reserve has room for its ack.
 */
import { lstatSync, type Stats } from "node:fs";
import type { Limits } from "../../core/limits.js";
import type { QueueName } from "../../core/paths.js";
import type { JsonValue } from "../../protocol/message.js";
import { CorruptQueueFileError, QueueFullError } from "../errors.js";
import type { AppendResult, PollResult } from "../store.js";
import { messageBytes, mintEpoch, takeBatch } from "../validate.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import { moveAside } from "../../core/fs/aside.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { type HeldLock, type LockOptions, withLock } from "../../core/fs/lock.js";
import { ALREADY_DURABLE, appendToLog, type PendingSync, truncateLog } from "./log-append.js";
import {
  COMPACT_SLACK_BYTES,
  emptyQueue,
  logHeader,
  logRecord,
  maxQueueFileBytes,
  recordMessageBytes,
  type ParsedQueue,
  parseQueueText,
  type QueueFile,
  readQueue,
  salvageSeqFloor,
  serializeLog,
} from "./log-format.js";
import { lstatOrNull, readFileEnds } from "../../core/fs/safe-open.js";
import { QueueMark, type QueueState, readMarkSeq } from "./queue-mark.js";
import { isOutOfSpace } from "../../core/fs/write-all.js";
import type { SpaceReserve } from "./space-reserve.js";

/** How much of each end of a corrupt file is read for salvage: its header and its last records. */
const SALVAGE_BYTES = 64 * 1024;

/** Where a queue log is and what it may hold. */
export interface QueueLogContext {
  /** The log's path (from core/paths.ts `queueFile`, so built from a checked id). */
  path: string;
  /** Its seq mark's path (core/paths.ts `queueSeqFile`). */
  seqPath: string;
  channelId: string;
  queue: QueueName;
  limits: Readonly<Limits>;
  /** Where a corrupt file moved aside, a queue raised above its mark or a broken lock is reported. */
  warn: (message: string) => void;
  /** Makes the channel folder again when it vanished under a waiting writer (the idle sweep removed it). */
  remakeFolder: () => void;
  /** The room an acknowledgement may use on a full disk (./space-reserve.ts). */
  reserve: SpaceReserve;
}

/**
 * Appends a message (already checked with `checkMessage`).
 * @throws QueueFullError (nothing changed), LockTimeoutError, I/O errors.
 */
export async function appendMessage(log: QueueLogContext, event: string, data: JsonValue): Promise<AppendResult> {
  const { limits } = log;
  const { result, pending } = await withLock(log.path, lockOptions(log), (lock) =>
    withMark(log, (mark) => {
      const { state, size } = queueState(log, mark);
      if (state.count >= limits.maxQueueMessages) throw new QueueFullError(log.channelId, log.queue, "messages", limits.maxQueueMessages);
      const seq = state.seq + 1;
      const record = logRecord({ seq, event, data, ts: new Date().toISOString() });
      const bytes = state.bytes + recordMessageBytes(record);
      if (bytes > limits.maxQueueBytes) throw new QueueFullError(log.channelId, log.queue, "bytes", limits.maxQueueBytes);
      lock.assertHeld();
      // A log started here begins an epoch: its seq counter may start again (no mark, or a folder made anew).
      const appended = appendToLog(log.path, size === 0 ? logHeader(seq, mintEpoch()) + record : record, size);
      const count = state.count + 1;
      writeMark(log, mark, { seq, count, bytes }, appended.stats);
      return { result: { seq, pending: count }, pending: appended.pending };
    }),
  );
  pending.sync();
  return result;
}

/**
 * What an append needs of the queue, and its log's length: the mark's record when it
 * describes the log (constant work), else the log read whole ({@link readLocked}, which
 * repairs it) and the mark written from it at once, so that the next append is constant
 * work again, even when this one is refused. Call only under the lock.
 */
function queueState(log: QueueLogContext, mark: QueueMark): { state: QueueState; size: number } {
  const stats = lstatOrNull(log.path);
  const cached = stats && mark.stateOf(stats);
  if (stats && cached) return { state: cached, size: stats.size };
  const parsed = readLocked(log, mark.seq);
  const state = { seq: parsed.queue.next_seq - 1, count: parsed.queue.messages.length, bytes: parsed.liveBytes };
  writeMark(log, mark, state, statsOrNull(log.path));
  return { state, size: parsed.validBytes };
}

/**
 * Acknowledges every message with `seq <= after`, then returns a batch of those after it
 * (at-least-once: they stay until a later cursor passes them). A cursor above the last
 * seq this queue handed out, or one of another epoch than the queue's (`epoch`, when
 * given), acknowledges nothing and changes nothing: the batch then starts at the
 * queue's first message, and its `cursor` is below `after`.
 * @throws LockTimeoutError, I/O errors.
 */
export async function readAfter(log: QueueLogContext, after: number, epoch?: string): Promise<PollResult> {
  let current = (await readUnlocked(log)) ?? emptyQueue();
  if (epoch !== undefined && epoch !== current.epoch) return fromStart(log, current, current.next_seq - 1);
  if (after >= current.next_seq) {
    const last = Math.max(current.next_seq - 1, readMarkSeq(log.seqPath) ?? 0);
    if (after > last) return fromStart(log, current, last);
  }
  // A cursor at or past next_seq but within the mark: this file went back; readLocked raises it.
  if (after >= current.next_seq || current.messages.some((message) => message.seq <= after)) {
    const ahead = after >= current.next_seq;
    const acknowledged = await log.reserve
      .withRoom(() =>
        withQueueLocked(log, (locked, mark, lock) => {
          // Replaced since the read without the lock (started again, or raised above its mark): nothing is acknowledged.
          if (after >= locked.queue.next_seq || (epoch !== undefined && epoch !== locked.queue.epoch))
            return { queue: locked.queue, pending: ALREADY_DURABLE, ahead: true };
          lock.assertHeld();
          return { ...acknowledge(log, mark, locked, after), ahead: false };
        }),
      )
      .catch((error: unknown) => {
        // A full disk must not lock the reader out: the read is answered from the whole
        // lines read above, and the acknowledgement waits for the next read with a cursor.
        if (ahead || !isOutOfSpace(error)) throw error;
        log.warn(`${errorText(error)}: messages up to seq ${after} of ${log.path} stay until the next read acknowledges them`);
        return null;
      });
    if (acknowledged) {
      acknowledged.pending.sync();
      current = acknowledged.queue;
      if (acknowledged.ahead) return fromStart(log, current, current.next_seq - 1);
    }
  }
  const unread = current.messages.filter((message) => message.seq > after);
  const batch = takeBatch(unread, log.limits.maxBatchBytes);
  return { messages: batch, cursor: batch.at(-1)?.seq ?? after, pending: unread.length - batch.length, epoch: current.epoch };
}

/** The answer to a cursor that names no seq of this queue (above the last one handed out, `last`, or of another epoch): the queue from its start, nothing acknowledged. */
function fromStart(log: QueueLogContext, queue: QueueFile, last: number): PollResult {
  const batch = takeBatch(queue.messages, log.limits.maxBatchBytes);
  return { messages: batch, cursor: batch.at(-1)?.seq ?? last, pending: queue.messages.length - batch.length, epoch: queue.epoch };
}

/**
 * Returns a batch of the waiting messages and deletes it (at-most-once).
 * @throws LockTimeoutError, I/O errors.
 */
export async function drain(log: QueueLogContext): Promise<PollResult> {
  const current = await readUnlocked(log);
  if (!current || current.messages.length === 0)
    return { messages: [], cursor: (current?.next_seq ?? 1) - 1, pending: 0, epoch: current?.epoch ?? NO_EPOCH };
  const drained = await log.reserve.withRoom(() =>
    withQueueLocked(log, (locked, mark, lock) => {
      const batch = takeBatch(locked.queue.messages, log.limits.maxBatchBytes);
      if (batch.length === 0) return { batch, queue: locked.queue, pending: ALREADY_DURABLE };
      lock.assertHeld();
      return { batch, ...acknowledge(log, mark, locked, batch.at(-1)!.seq) };
    }),
  );
  drained.pending.sync();
  const { batch, queue } = drained;
  return { messages: batch, cursor: batch.at(-1)?.seq ?? queue.next_seq - 1, pending: queue.messages.length, epoch: queue.epoch };
}

function lockOptions(log: QueueLogContext): LockOptions {
  return { staleMs: log.limits.lockStaleMs, remakeFolder: log.remakeFolder, warn: log.warn, keepRecord: true };
}

/** Runs `action` under the queue's lock on the queue read whole ({@link readLocked}: repaired), its mark open. */
function withQueueLocked<T>(log: QueueLogContext, action: (locked: ParsedQueue, mark: QueueMark, lock: HeldLock) => T): Promise<T> {
  return withLock(log.path, lockOptions(log), (lock) => withMark(log, (mark) => action(readLocked(log, mark.seq), mark, lock)));
}

/** Runs `action` with the queue's mark open. Call only under the lock. */
function withMark<T>(log: QueueLogContext, action: (mark: QueueMark) => T): T {
  const mark = QueueMark.open(log.seqPath, log.warn);
  try {
    return action(mark);
  } finally {
    mark.close();
  }
}

/** Writes the ack of every message up to `seq` (at most the last seq handed out), then the mark. Call only under the lock. */
function acknowledge(log: QueueLogContext, mark: QueueMark, current: ParsedQueue, seq: number): { queue: QueueFile; pending: PendingSync } {
  const kept = current.queue.messages.filter((message) => message.seq > seq);
  const gone = current.queue.messages.slice(0, current.queue.messages.length - kept.length);
  const bytes = current.liveBytes - gone.reduce((sum, message) => sum + messageBytes(message), 0);
  const queue: QueueFile = { next_seq: current.queue.next_seq, messages: kept, epoch: current.queue.epoch };
  const written = writeRecord(log, current, logRecord({ ack: seq }), queue, bytes);
  writeMark(log, mark, { seq: queue.next_seq - 1, count: kept.length, bytes }, written.stats);
  return { queue, pending: written.pending };
}

/**
 * Adds `record` to the log (`next` is the queue with it, `liveBytes` its live size).
 * When dead records (acknowledged messages, acks) would outweigh the live ones and
 * pass {@link COMPACT_SLACK_BYTES}, the log is compacted instead: rewritten whole
 * (header and live messages), durably, and renamed over the old one. A compaction that
 * finds no room on the disk appends the record instead (an acknowledgement must not
 * need room for a copy of the queue), as long as the log stays within half the size a
 * reader accepts. Call only under the lock.
 */
function writeRecord(
  log: QueueLogContext,
  current: ParsedQueue,
  record: string,
  next: QueueFile,
  liveBytes: number,
): { stats: Stats | null; pending: PendingSync } {
  const { path } = log;
  const fileBytes = current.validBytes + Buffer.byteLength(record);
  if (fileBytes > 2 * liveBytes + COMPACT_SLACK_BYTES) {
    try {
      writeFileAtomic(path, serializeLog(next));
      return { stats: statsOrNull(path), pending: ALREADY_DURABLE };
    } catch (error) {
      if (!isOutOfSpace(error) || fileBytes > maxQueueFileBytes(log.limits) / 2) throw error;
      log.warn(`${errorText(error)}: could not compact ${path}; appended to it instead`);
    }
  }
  const text = current.validBytes === 0 ? logHeader(current.queue.next_seq, current.queue.epoch) + record : record;
  return appendToLog(path, text, current.validBytes);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Writes the mark for the log whose stats are `stats` (none: nothing is written). A mark
 * that cannot be written is reported, not thrown: the log holds the change, and the mark
 * left behind no longer describes it, so the next write reads the log whole.
 */
function writeMark(log: QueueLogContext, mark: QueueMark, state: QueueState, stats: Stats | null): void {
  if (!stats) return;
  try {
    mark.write(state, stats);
  } catch (error) {
    log.warn(`could not write ${log.seqPath} (${errorText(error)}); the queue goes on`);
  }
}

/** The log's lstat, or `null` when it cannot be had (then its mark is left to be rebuilt). */
function statsOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Reads a queue without its lock; a corrupt file is handed to {@link readLocked}, under the lock, to be moved aside. */
async function readUnlocked(log: QueueLogContext): Promise<QueueFile | null> {
  try {
    return readQueue(log.path, maxQueueFileBytes(log.limits))?.queue ?? null;
  } catch (error) {
    if (!(error instanceof CorruptQueueFileError)) throw error;
    return withQueueLocked(log, (locked) => locked.queue);
  }
}

/**
 * Reads a queue while holding its lock and leaves its file ready for an append: a log
 * with no torn last line (cut off: it was never acknowledged), a `next_seq` above the
 * mark (`mark`, the highest seq handed out).
 *
 * A file that is not a queue (or larger than a queue can be) is moved aside to
 * `<name>.corrupt-<timestamp>` (never deleted), reported, and replaced by an empty log
 * whose next_seq is above anything the old file can have handed out: above the mark,
 * what its remains show, and the current time in milliseconds (seqs that count up from
 * 1 by one per durable write stay far below it; the mark is not fsynced, so it alone
 * may be behind after a power cut).
 * Call only under the lock.
 */
function readLocked(log: QueueLogContext, mark: number | null): ParsedQueue {
  const { path } = log;
  let parsed: ParsedQueue | null;
  try {
    parsed = readQueue(path, maxQueueFileBytes(log.limits));
  } catch (error) {
    if (!(error instanceof CorruptQueueFileError)) throw error;
    const floor = Math.max(salvageSeqFloor(readFileEnds(path, SALVAGE_BYTES)), mark ?? 0, Date.now());
    const aside = moveAside(path, "corrupt");
    log.warn(`${error.reason}: moved ${path} aside to ${aside}; the queue starts again, empty`);
    // Written at once, so that the new floor outlives this call even when the caller only reads.
    // A new epoch: the readers' seqs of the old file may be above or below the floor.
    return rewrite(path, emptyQueue(floor + 1, mintEpoch()));
  }
  const found = parsed?.queue ?? emptyQueue();
  if (mark !== null && found.next_seq <= mark) {
    const what = parsed ? `went back to seq ${found.next_seq - 1}` : "is missing";
    log.warn(
      `${path} ${what} although seq ${mark} was handed out (put back from an older copy, deleted, or cut short by a crash): ` +
        `its messages are kept, and new ones go on from seq ${mark + 1}`,
    );
    // A file put back keeps its epoch (its seqs are the same); a missing one is a new log, with a new epoch.
    return rewrite(path, { ...found, next_seq: mark + 1, epoch: parsed ? found.epoch : mintEpoch() });
  }
  if (!parsed) return parseQueueText("", path);
  if (parsed.totalBytes > parsed.validBytes) truncateLog(path, parsed.validBytes);
  return parsed;
}

/** Replaces the file at `path` with the compact log of `queue`, durably. Call only under the lock. */
function rewrite(path: string, queue: QueueFile): ParsedQueue {
  const text = serializeLog(queue);
  writeFileAtomic(path, text);
  return parseQueueText(text, path);
}
