/**
 * The operations on one queue log (./log-format.ts) that a server makes: append, read
 * with a cursor, read and clear. Each change happens under the queue's lock and is
 * durable before its caller hears of it.
 *
 * Invariants:
 * - every change to a queue file happens under its lock: one appended line (a message
 *   or an ack), or an atomic replacement (compaction, conversion, a fresh queue after
 *   corruption); a reader without the lock acts only on whole lines of whole files;
 * - an append or an ack is durable (fdatasync) before its caller hears of it; the sync
 *   runs after the lock is released, so that writers share journal commits;
 * - `seq` never repeats in a queue: `next_seq` only grows, is kept when the queue
 *   drains, is raised past any cursor a reader shows, and a queue restarted after
 *   corruption starts above every seq it may have handed out;
 * - a write refused for a limit changes nothing already queued.
 */
import type { Limits } from "../../core/limits.js";
import type { QueueName } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import { QueueFullError } from "../errors.js";
import type { AppendResult, PollResult } from "../store.js";
import { takeBatch } from "../validate.js";
import { moveAside } from "./aside.js";
import { writeFileAtomic } from "./atomic-write.js";
import { withLock } from "./lock.js";
import { ALREADY_DURABLE, appendToLog, type PendingSync, truncateLog } from "./log-append.js";
import {
  CorruptQueueFileError,
  emptyQueue,
  logHeader,
  logRecord,
  type ParsedQueue,
  parseQueueText,
  type QueueFile,
  readQueue,
  salvageSeqFloor,
  serializeLog,
} from "./log-format.js";
import { readRegularFile } from "./safe-read.js";

/** A log is compacted once its dead records outweigh its live ones by this much. */
const COMPACT_SLACK_BYTES = 64 * 1024;

/** Where a queue log is and what it may hold. */
export interface QueueLogContext {
  /** The log's path (from core/paths.ts `queueFile`, so built from a checked id). */
  path: string;
  channelId: string;
  queue: QueueName;
  limits: Readonly<Limits>;
  /** Where a corrupt file moved aside is reported. */
  warn: (message: string) => void;
}

/**
 * Appends a message (already checked with `checkMessage`).
 * @throws QueueFullError (nothing changed), LockTimeoutError, I/O errors.
 */
export async function appendMessage(log: QueueLogContext, event: string, data: JsonValue): Promise<AppendResult> {
  const { path, limits } = log;
  const { result, pending } = await withLock(path, limits.lockStaleMs, (lock) => {
    const current = readLocked(log);
    const { messages, next_seq: seq } = current.queue;
    if (messages.length >= limits.maxQueueMessages) throw new QueueFullError(log.channelId, log.queue, "messages", limits.maxQueueMessages);
    const message: QueueMessage = { seq, event, data, ts: new Date().toISOString() };
    const record = logRecord(message);
    const liveBytes = current.liveBytes + Buffer.byteLength(record);
    if (liveBytes > limits.maxQueueBytes) throw new QueueFullError(log.channelId, log.queue, "bytes", limits.maxQueueBytes);
    lock.assertHeld();
    const next: QueueFile = { version: 1, next_seq: seq + 1, messages: [...messages, message] };
    return { result: { seq, pending: next.messages.length }, pending: writeRecord(path, current, record, next, liveBytes) };
  });
  pending.sync();
  return result;
}

/**
 * Acknowledges every message with `seq <= after`, then returns a batch of those after it
 * (at-least-once: they stay until a later cursor passes them).
 * @throws LockTimeoutError, I/O errors.
 */
export async function readAfter(log: QueueLogContext, after: number): Promise<PollResult> {
  let current = (await readUnlocked(log)) ?? emptyQueue();
  const received = current.messages.some((message) => message.seq <= after);
  // A cursor at or past next_seq comes from a reader that saw a queue this file no
  // longer remembers (deleted by hand, say); the ack raises next_seq past it, which
  // keeps every new message above the cursor, where the reader will look for it.
  if (received || after >= current.next_seq) {
    const acknowledged = await withLock(log.path, log.limits.lockStaleMs, (lock) => {
      lock.assertHeld();
      return acknowledge(log.path, readLocked(log), after);
    });
    acknowledged.pending.sync();
    current = acknowledged.queue;
  }
  const unread = current.messages.filter((message) => message.seq > after);
  const batch = takeBatch(unread, log.limits.maxBatchBytes);
  return { messages: batch, cursor: batch.at(-1)?.seq ?? after, pending: unread.length - batch.length };
}

/**
 * Returns a batch of the waiting messages and deletes it (at-most-once).
 * @throws LockTimeoutError, I/O errors.
 */
export async function drain(log: QueueLogContext): Promise<PollResult> {
  const current = await readUnlocked(log);
  if (!current || current.messages.length === 0) return { messages: [], cursor: (current?.next_seq ?? 1) - 1, pending: 0 };
  const drained = await withLock(log.path, log.limits.lockStaleMs, (lock) => {
    const locked = readLocked(log);
    const batch = takeBatch(locked.queue.messages, log.limits.maxBatchBytes);
    if (batch.length === 0) return { batch, queue: locked.queue, pending: ALREADY_DURABLE };
    lock.assertHeld();
    return { batch, ...acknowledge(log.path, locked, batch.at(-1)!.seq) };
  });
  drained.pending.sync();
  const { batch, queue } = drained;
  return { messages: batch, cursor: batch.at(-1)?.seq ?? queue.next_seq - 1, pending: queue.messages.length };
}

/** Writes the ack of every message up to `seq`. Call only under the lock. */
function acknowledge(path: string, current: ParsedQueue, seq: number): { queue: QueueFile; pending: PendingSync } {
  const kept = current.queue.messages.filter((message) => message.seq > seq);
  const gone = current.queue.messages.slice(0, current.queue.messages.length - kept.length);
  const liveBytes = current.liveBytes - gone.reduce((sum, message) => sum + Buffer.byteLength(logRecord(message)), 0);
  const queue: QueueFile = { version: 1, next_seq: Math.max(current.queue.next_seq, seq + 1), messages: kept };
  return { queue, pending: writeRecord(path, current, logRecord({ ack: seq }), queue, liveBytes) };
}

/**
 * Adds `record` to the log (`next` is the queue with it, `liveBytes` its live size).
 * When dead records (acknowledged messages, acks) would outweigh the live ones and
 * pass {@link COMPACT_SLACK_BYTES}, the log is compacted instead: rewritten whole
 * (header and live messages), durably, and renamed over the old one. Call only under the lock.
 */
function writeRecord(path: string, current: ParsedQueue, record: string, next: QueueFile, liveBytes: number): PendingSync {
  const fileBytes = current.validBytes + Buffer.byteLength(record);
  if (fileBytes > 2 * liveBytes + COMPACT_SLACK_BYTES) {
    writeFileAtomic(path, serializeLog(next));
    return ALREADY_DURABLE;
  }
  const text = current.validBytes === 0 ? logHeader(current.queue.next_seq) + record : record;
  return appendToLog(path, text, current.validBytes);
}

/** Reads a queue without its lock; a corrupt file is handed to {@link readLocked}, under the lock, to be moved aside. */
async function readUnlocked(log: QueueLogContext): Promise<QueueFile | null> {
  try {
    return readQueue(log.path)?.queue ?? null;
  } catch (error) {
    if (!(error instanceof CorruptQueueFileError)) throw error;
    return withLock(log.path, log.limits.lockStaleMs, () => readLocked(log).queue);
  }
}

/**
 * Reads a queue while holding its lock and leaves its file ready for an append: a log
 * with no torn last line (cut off: it was never acknowledged), a format-1 document
 * converted to a log. A file that is not a queue is moved aside to
 * `<name>.corrupt-<timestamp>` (never deleted), reported, and replaced by an empty log
 * whose next_seq is above anything the old file can have handed out: the larger of
 * what its remains show and the current time in milliseconds (seqs that count up from
 * 1 by one per durable write stay far below it). Call only under the lock.
 */
function readLocked(log: QueueLogContext): ParsedQueue {
  const { path } = log;
  let parsed: ParsedQueue | null;
  try {
    parsed = readQueue(path);
  } catch (error) {
    if (!(error instanceof CorruptQueueFileError)) throw error;
    const remains = readTextOrNothing(path);
    const aside = moveAside(path, "corrupt");
    log.warn(`${error.reason}: moved ${path} aside to ${aside}; the queue starts again, empty`);
    // Written at once, so that the new floor outlives this call even when the caller only reads.
    return rewrite(path, emptyQueue(Math.max(salvageSeqFloor(remains) + 1, Date.now())));
  }
  if (!parsed) return parseQueueText("", path);
  if (parsed.format === 1) return rewrite(path, parsed.queue);
  if (parsed.totalBytes > parsed.validBytes) truncateLog(path, parsed.validBytes);
  return parsed;
}

/** Replaces the file at `path` with the compact log of `queue`, durably. Call only under the lock. */
function rewrite(path: string, queue: QueueFile): ParsedQueue {
  const text = serializeLog(queue);
  writeFileAtomic(path, text);
  return parseQueueText(text, path);
}

/** The text of `path` for salvage, or "" when it cannot be read as a regular file. */
function readTextOrNothing(path: string): string {
  try {
    return readRegularFile(path) ?? "";
  } catch {
    return "";
  }
}
