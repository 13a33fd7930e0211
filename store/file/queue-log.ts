/**
 * One queue's files, and every change a server makes to them: append, read with a
 * cursor, read and clear. Three files beside each other in the channel folder
 * (core/paths.ts):
 *
 * - the log, `<queue>.json` (./log-format.ts): the queue itself;
 * - the mark, `<queue>.seq`: one fixed-width line holding what an append needs of the
 *   queue (the highest seq handed out, the live messages' count and bytes) and the
 *   identity of the log it describes (inode, size, ctime: the kernel sets ctime on every
 *   change, and no one can set it back), so that an append reads one short line
 *   instead of the whole log;
 * - the lock, `<queue>.json.lock` (core/fs/lock.ts).
 *
 * An append does the same few steps whatever the queue holds: take the lock, read the
 * mark and check it against the log's lstat, check the limits, append one line, write
 * the mark, release the lock, fdatasync. The log is read whole only when the mark does
 * not describe it ({@link QueueLog.state}, which also repairs it). Reads parse the log
 * (they return its messages), and compaction is done by their acknowledgements, never
 * by an append.
 *
 * Invariants:
 * - every change to the log happens under its lock: one appended line (a message or an
 *   ack), or an atomic replacement (compaction, a fresh log after corruption, a log
 *   raised above its mark); a reader without the lock acts only on whole lines of whole
 *   files;
 * - a line is appended in one O_APPEND write (repeated for the rest only if the kernel
 *   takes part of it, core/fs/write-all.ts), so that readers without the lock see it
 *   whole or not at all; on any error the log is cut back to its previous length, so a
 *   refused write leaves the queue as it was and is never acknowledged. A torn line
 *   never becomes part of the log: until the cut it is a last line without a newline,
 *   which readers ignore; should the cut fail or the process die first, the log no
 *   longer matches its mark, so the next writer reads it whole and cuts it under the
 *   lock before appending;
 * - the log is the truth and the mark a cache of it: its count and bytes are used only
 *   while the log is the very file it describes. Its seq is trusted even when the log
 *   differs: it is a floor, so that a log put back from an older copy goes on above
 *   every seq handed out;
 * - every change to the log is followed, under the same lock, by its mark's, written in
 *   one write of one fixed-width line at offset 0 (within one disk sector: after a power
 *   cut it is the old line or the new one, and anything else does not parse and is
 *   rebuilt from the log). A change whose mark is not written (a crash, a failed write)
 *   leaves a mark that no longer describes the log, so the next writer reads it whole;
 * - an append or an ack is durable (fdatasync, and for a log written from its start its
 *   folder's fsync: core/fs/durable.ts) before its caller hears of it; the sync runs
 *   after the lock is released, so that writers share journal commits and the lock is
 *   held for microseconds. The mark is not fsynced: one a power cut left behind or
 *   ahead no longer describes the log, and one ahead only makes seqs skip (seqs must
 *   never repeat, they need not be contiguous);
 * - `seq` never repeats in a queue: `next_seq` only grows and is kept when the queue
 *   drains; every seq handed out is recorded in the mark, and a log whose `next_seq` is
 *   not above the mark's seq goes on above it, keeping every message it holds; a log
 *   started again after corruption starts above every seq it may have handed out;
 * - a cursor moves nothing but acknowledgements up to itself, and never past the last
 *   seq handed out: a cursor above it (a hostile caller, or a reader of a queue that was
 *   deleted) acknowledges nothing and gets the queue's messages from its start;
 * - a log started from nothing (no file, or an empty one), or again after corruption,
 *   gets a new epoch (../../protocol/epoch.ts); every rewrite of a log keeps its epoch.
 *   A cursor of another epoch than the log's acknowledges nothing and gets the queue's
 *   messages from its start, whatever its number;
 * - a write refused for a limit changes nothing already queued;
 * - acknowledging needs no free room: every append refills the data directory's space
 *   reserve (core/fs/space-reserve.ts) before it writes, and only a read that
 *   acknowledges may use it, once it failed for lack of room; a compaction that finds
 *   no room on the disk appends the ack instead (the log is compacted by a later
 *   write); and with no reserve left, a read with a cursor whose ack cannot be written
 *   at all (nor its lock taken) still returns the messages after the cursor,
 *   acknowledging nothing: they stay, and the next read with a cursor acknowledges them.
 *   Nothing is lost and no seq repeats; only a read-and-clear, which must delete what it
 *   returns, fails when neither the disk nor the reserve has room for its ack.
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, readSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import type { Limits } from "../../core/limits.js";
import { type QueueName, queueFile, queueMarkFile, queueReadersFile } from "../../core/paths.js";
import type { JsonValue } from "../../protocol/message.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import { CorruptQueueFileError, QueueFullError } from "../errors.js";
import type { AppendResult, PollResult } from "../store.js";
import { formatReaders, parseReaders, planRead, type ReadPlan, type ReaderCursors } from "../readers.js";
import { messageBytes, mintEpoch, takeBatch } from "../validate.js";
import { moveAside } from "../../core/fs/aside.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { syncFolder } from "../../core/fs/durable.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";
import { type HeldLock, withLock } from "../../core/fs/lock.js";
import { lstatOrNull, openFile, type OpenFile, reachFolder, readFileEnds, readTextFile } from "../../core/fs/safe-open.js";
import type { SpaceReserve } from "../../core/fs/space-reserve.js";
import { isOutOfSpace, isUnwritable, writeAll } from "../../core/fs/write-all.js";
import {
  COMPACT_SLACK_BYTES,
  emptyQueue,
  logHeader,
  logRecord,
  maxLogBytes,
  type ParsedLog,
  parseLog,
  type Queue,
  readLog,
  recordMessageBytes,
  salvageSeqFloor,
  serializeLog,
} from "./log-format.js";

/** What every queue of one data directory shares. */
export interface QueueContext {
  /** The store's own data directory, from which every folder is reached (core/fs/safe-open.ts). */
  rootDir: string;
  /** The data directory the channels are in: `rootDir`, or a principal's folder in it. */
  dataDir: string;
  limits: Readonly<Limits>;
  /** Where a corrupt file moved aside, a log raised above its mark or a broken lock is reported. */
  warn: (message: string) => void;
  /** The room an acknowledgement may use on a full disk. */
  reserve: SpaceReserve;
}

/** Who reads with a cursor (../readers.ts). */
export interface QueueReader {
  /** The reader id, or DEFAULT_READER for a poll that named none. */
  id: string;
  /** Whether the poll named its reader (only such a reader is told it missed messages). */
  named: boolean;
  /** Now, by the store's clock. */
  now: number;
}

/** The largest readers' file: MAX_READERS records of at most ~80 bytes, with room to spare; a larger one is not the store's. */
const READERS_MAX_BYTES = 4096;

/** What an append needs to know of a queue, as its mark records it. */
export interface QueueState {
  /** The highest seq handed out; 0 when none was. */
  seq: number;
  /** Live messages. */
  count: number;
  /** Bytes of the live messages (store/validate.ts `messageBytes`: the measure of the queue's byte limit). */
  bytes: number;
}

/** A write that is done but not yet durable; `sync` makes it so, exactly once, after the lock's release. */
interface PendingSync {
  sync(): void;
}

/** A write that is already durable (a whole-file replacement fsyncs before its rename). */
const ALREADY_DURABLE: PendingSync = { sync() {} };

/** How much of each end of a corrupt log is read for salvage: its header and its last records. */
const SALVAGE_BYTES = 64 * 1024;

/** One queue of one channel: its log, mark and lock (see the top of this module). Holds paths only: cheap to make per call. */
export class QueueLog {
  /** The log. */
  private readonly path: string;
  /** The mark. */
  private readonly markPath: string;
  /** The readers' records (../readers.ts). */
  private readonly readersPath: string;

  /** @throws InvalidChannelIdError before any path is built. */
  constructor(
    private readonly context: QueueContext,
    private readonly channelId: string,
    private readonly queue: QueueName,
  ) {
    this.path = queueFile(context.dataDir, channelId, queue);
    this.markPath = queueMarkFile(context.dataDir, channelId, queue);
    this.readersPath = queueReadersFile(context.dataDir, channelId, queue);
  }

  /**
   * Appends a message (already checked with store/validate.ts `checkMessage`); makes the
   * channel folder, and every folder above it, when missing.
   * @throws QueueFullError (nothing changed), LockTimeoutError, LockLostError, I/O errors.
   */
  async append(event: string, data: JsonValue): Promise<AppendResult> {
    const { limits, reserve } = this.context;
    this.reachFolder();
    reserve.refill();
    const { result, pending } = await this.locked((mark, lock) => {
      const { state, size } = this.state(mark);
      if (state.count >= limits.maxQueueMessages) throw new QueueFullError(this.channelId, this.queue, "messages", limits.maxQueueMessages);
      const seq = state.seq + 1;
      const record = logRecord({ seq, event, data, ts: new Date().toISOString() });
      const bytes = state.bytes + recordMessageBytes(record);
      if (bytes > limits.maxQueueBytes) throw new QueueFullError(this.channelId, this.queue, "bytes", limits.maxQueueBytes);
      lock.assertHeld();
      // A log started here begins an epoch: its seq counter may start again (no mark, or a folder made anew).
      const appended = this.appendText(size === 0 ? logHeader(seq, mintEpoch()) + record : record, size);
      const count = state.count + 1;
      this.writeMark(mark, { seq, count, bytes }, appended.stats);
      return { result: { seq, pending: count }, pending: appended.pending };
    });
    pending.sync();
    return result;
  }

  /** Makes the channel folder, and every folder above it (a principal's own too), when missing. */
  private reachFolder(): void {
    const { rootDir, warn } = this.context;
    reachFolder(rootDir, dirname(this.path), { create: true, warn });
  }

  /** Runs `action` under the queue's lock, with its mark open. */
  private locked<T>(action: (mark: Mark, lock: HeldLock) => T): Promise<T> {
    const { limits, warn } = this.context;
    return withLock(this.path, { staleMs: limits.lockStaleMs, remakeFolder: () => this.reachFolder(), warn }, (lock) => {
      const mark = Mark.open(this.markPath, warn);
      try {
        return action(mark, lock);
      } finally {
        mark.close();
      }
    });
  }

  /**
   * What an append needs of the queue, and its log's length: the mark's record when it
   * describes the log (constant work), else the log read whole ({@link readLocked},
   * which repairs it) and the mark written from it at once, so that the next append is
   * constant work again, even when this one is refused. Call only under the lock.
   */
  private state(mark: Mark): { state: QueueState; size: number } {
    const stats = lstatOrNull(this.path);
    const cached = stats && mark.stateOf(stats);
    if (stats && cached) return { state: cached, size: stats.size };
    const parsed = this.readLocked(mark.seq);
    const state = { seq: parsed.queue.next_seq - 1, count: parsed.queue.messages.length, bytes: parsed.liveBytes };
    this.writeMark(mark, state);
    return { state, size: parsed.validBytes };
  }

  /**
   * Appends `text` to the log, whose first `validBytes` bytes are its whole records, in
   * one O_APPEND write (see the top of this module). Call only under the lock.
   * @returns the log's stats after it, and its fdatasync to come (and its folder's fsync
   *   when the log was written from its start: its name may be new to its folder).
   * @throws the I/O error (ENOSPC, EROFS, …), after cutting the log back to `validBytes`;
   *   NotRegularFileError, UnsafeLayoutError when something else took the log's place.
   */
  private appendText(text: string, validBytes: number): { stats: Stats; pending: PendingSync } {
    const path = this.path;
    const { fd } = openFile(path, "append", Number.MAX_SAFE_INTEGER)!;
    let stats: Stats;
    try {
      writeAll(fd, text, path);
      stats = fstatSync(fd);
    } catch (error) {
      try {
        ftruncateSync(fd, validBytes);
      } finally {
        closeSync(fd);
      }
      throw error;
    }
    const sync = () => {
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
      if (validBytes === 0) syncFolder(dirname(path));
    };
    return { stats, pending: { sync } };
  }

  /**
   * Writes the mark for the log as it is now (`stats`, else its lstat; none: nothing is
   * written). A mark that cannot be written is reported, not thrown: the log holds the
   * change, and the mark left behind no longer describes it, so the next write reads
   * the log whole.
   */
  private writeMark(mark: Mark, state: QueueState, stats?: Stats): void {
    try {
      const log = stats ?? lstatOrNull(this.path);
      if (log) mark.write(state, log);
    } catch (error) {
      this.context.warn(`could not write ${this.markPath} (${errorText(error)}); the queue goes on`);
    }
  }

  /**
   * Acknowledges every message with `seq <= after` for `reader` (recording its cursor,
   * ../readers.ts), deletes those every live reader acknowledged, then returns a batch of
   * those after `after` (at-least-once: they stay until a later cursor passes them). A
   * cursor above the last seq this queue handed out, or one of another epoch than the
   * queue's (`epoch`, when given), acknowledges nothing: the batch then starts at the
   * queue's first message, and its `cursor` is below `after`; the reader is recorded as
   * holding everything still queued. With `reader` null (a read that must make nothing:
   * its channel does not exist) nothing is recorded or acknowledged.
   * @throws LockTimeoutError, I/O errors.
   */
  async readAfter(after: number, epoch: string | undefined, reader: QueueReader | null): Promise<PollResult> {
    const current = (await this.readUnlocked()) ?? emptyQueue();
    const last = after >= current.next_seq ? Math.max(current.next_seq - 1, readMarkSeq(this.markPath) ?? 0) : current.next_seq - 1;
    const plan = reader && this.planRead(current, after, epoch, reader, this.readReaders());
    // A cursor at or past next_seq but within the mark: this log went back; readLocked raises it.
    const wentBack = after >= current.next_seq && after <= last;
    const trims = wentBack || current.messages.some((message) => message.seq <= (plan?.trimTo ?? 0));
    if (!reader || !plan || (!plan.readers && !trims)) return this.answer(current, after, epoch, last, plan?.missed);
    const locked = await this.context.reserve
      .withRoom(() =>
        this.locked((mark, lock) => {
          const log = this.readLocked(mark.seq);
          const fresh = this.planRead(log.queue, after, epoch, reader, this.readReaders());
          lock.assertHeld();
          if (fresh.readers) this.writeReaders(fresh.readers);
          const trimmed = log.queue.messages.some((message) => message.seq <= fresh.trimTo);
          const written = trimmed ? this.acknowledge(mark, log, fresh.trimTo) : { queue: log.queue, pending: ALREADY_DURABLE };
          return { ...written, missed: fresh.missed };
        }),
      )
      .catch((error: unknown) => {
        // A reader's record is no reason to fail a read: on a disk that takes no write, the
        // read is answered from the whole lines read above, recording nothing.
        if (!trims && isUnwritable(error)) return null;
        // A full disk must not lock the reader out: the read is answered from the whole
        // lines read above, and the acknowledgement waits for the next read with a cursor.
        if (wentBack || !isOutOfSpace(error)) throw error;
        this.context.warn(`${errorText(error)}: messages up to seq ${after} of ${this.path} stay until the next read acknowledges them`);
        return null;
      });
    if (!locked) return this.answer(current, after, epoch, last, plan.missed);
    locked.pending.sync();
    return this.answer(locked.queue, after, epoch, locked.queue.next_seq - 1, locked.missed);
  }

  /**
   * What a read with a cursor does to the queue's readers (../readers.ts), `queue` as it
   * is now: a cursor of another epoch, or above every seq handed out, names no seq of it.
   */
  private planRead(queue: Queue, after: number, epoch: string | undefined, reader: QueueReader, readers: ReaderCursors): ReadPlan {
    const acknowledges = (epoch === undefined || epoch === queue.epoch) && after < queue.next_seq;
    const floor = (queue.messages[0]?.seq ?? queue.next_seq) - 1;
    const judged = reader.named && epoch !== undefined;
    return planRead(readers, { reader: reader.id, after: acknowledges ? after : 0, acknowledges, floor, now: reader.now, judged });
  }

  /** The answer to a read with a cursor from `queue`: the batch after `after`, or the queue from its start when the cursor names no seq of it (`last`: the last seq handed out). */
  private answer(queue: Queue, after: number, epoch: string | undefined, last: number, missed: boolean | undefined): PollResult {
    const named = (epoch === undefined || epoch === queue.epoch) && after <= last;
    const unread = named ? queue.messages.filter((message) => message.seq > after) : queue.messages;
    const batch = takeBatch(unread, this.context.limits.maxBatchBytes);
    const cursor = batch.at(-1)?.seq ?? (named ? after : last);
    return { messages: batch, cursor, pending: unread.length - batch.length, epoch: queue.epoch, ...(missed ? { missed: true } : {}) };
  }

  /** The records of the queue's readers; none when there is no such file or it holds none (see ../readers.ts: a lost record can only make a reader reload). */
  private readReaders(): ReaderCursors {
    try {
      const text = readTextFile(this.readersPath, READERS_MAX_BYTES);
      return text === null ? {} : parseReaders(text);
    } catch (error) {
      if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return {};
      throw error;
    }
  }

  /**
   * Writes the readers' records in place, in one write at offset 0 (they are small), and
   * cuts what is left of the previous ones. Not synced: a record lost or torn by a crash
   * reads as none. A write that fails is reported, not thrown. Call only under the lock.
   */
  private writeReaders(readers: ReaderCursors): void {
    try {
      const line = formatReaders(readers);
      let file: OpenFile;
      try {
        file = openFile(this.readersPath, "update", READERS_MAX_BYTES)!;
      } catch (error) {
        if (!(error instanceof NotRegularFileError || error instanceof FileTooLargeError)) throw error;
        this.context.warn(`${error.message}: moved it aside to ${moveAside(this.readersPath, "corrupt")}`);
        file = openFile(this.readersPath, "update", READERS_MAX_BYTES)!;
      }
      try {
        writeAll(file.fd, line, this.readersPath, 0);
        if (file.size > Buffer.byteLength(line)) ftruncateSync(file.fd, Buffer.byteLength(line));
      } finally {
        closeSync(file.fd);
      }
    } catch (error) {
      this.context.warn(`could not write ${this.readersPath} (${errorText(error)}); its readers may be told they missed messages`);
    }
  }

  /**
   * Returns a batch of the waiting messages and deletes it (at-most-once).
   * @throws LockTimeoutError, I/O errors.
   */
  async drain(): Promise<PollResult> {
    const current = await this.readUnlocked();
    if (!current || current.messages.length === 0)
      return { messages: [], cursor: (current?.next_seq ?? 1) - 1, pending: 0, epoch: current?.epoch ?? NO_EPOCH };
    const drained = await this.context.reserve.withRoom(() =>
      this.locked((mark, lock) => {
        const locked = this.readLocked(mark.seq);
        const batch = takeBatch(locked.queue.messages, this.context.limits.maxBatchBytes);
        if (batch.length === 0) return { batch, queue: locked.queue, pending: ALREADY_DURABLE };
        lock.assertHeld();
        return { batch, ...this.acknowledge(mark, locked, batch.at(-1)!.seq) };
      }),
    );
    drained.pending.sync();
    const { batch, queue } = drained;
    return { messages: batch, cursor: batch.at(-1)?.seq ?? queue.next_seq - 1, pending: queue.messages.length, epoch: queue.epoch };
  }

  /** Writes the ack of every message up to `seq` (at most the last seq handed out), then the mark. Call only under the lock. */
  private acknowledge(mark: Mark, current: ParsedLog, seq: number): { queue: Queue; pending: PendingSync } {
    const kept = current.queue.messages.filter((message) => message.seq > seq);
    const gone = current.queue.messages.slice(0, current.queue.messages.length - kept.length);
    const bytes = current.liveBytes - gone.reduce((sum, message) => sum + messageBytes(message), 0);
    const queue: Queue = { next_seq: current.queue.next_seq, messages: kept, epoch: current.queue.epoch };
    const written = this.writeRecord(current, logRecord({ ack: seq }), queue, bytes);
    this.writeMark(mark, { seq: queue.next_seq - 1, count: kept.length, bytes }, written.stats);
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
   * @returns the log's stats when they are known without an lstat, and the sync to come.
   */
  private writeRecord(current: ParsedLog, record: string, next: Queue, liveBytes: number): { stats?: Stats; pending: PendingSync } {
    const fileBytes = current.validBytes + Buffer.byteLength(record);
    if (fileBytes > 2 * liveBytes + COMPACT_SLACK_BYTES) {
      try {
        writeFileAtomic(this.path, serializeLog(next));
        return { pending: ALREADY_DURABLE };
      } catch (error) {
        if (!isOutOfSpace(error) || fileBytes > maxLogBytes(this.context.limits) / 2) throw error;
        this.context.warn(`${errorText(error)}: could not compact ${this.path}; appended to it instead`);
      }
    }
    const text = current.validBytes === 0 ? logHeader(current.queue.next_seq, current.queue.epoch) + record : record;
    return this.appendText(text, current.validBytes);
  }

  /** Reads the queue without its lock; a corrupt log is handed to {@link readLocked}, under the lock, to be moved aside. */
  private async readUnlocked(): Promise<Queue | null> {
    try {
      return readLog(this.path, maxLogBytes(this.context.limits))?.queue ?? null;
    } catch (error) {
      if (!(error instanceof CorruptQueueFileError)) throw error;
      return this.locked((mark) => this.readLocked(mark.seq).queue);
    }
  }

  /**
   * Reads the log under the lock and leaves it ready for an append: no torn last line
   * (cut off: it was never acknowledged), a `next_seq` above `floor` (the mark's seq,
   * the highest handed out).
   *
   * A file that is not a log (or larger than a log can be) is moved aside to
   * `<name>.corrupt-<timestamp>` (never deleted), reported, and replaced by an empty log
   * whose next_seq is above anything the old file can have handed out: above the floor,
   * what its remains show, and the current time in milliseconds (seqs that count up from
   * 1 by one per durable write stay far below it; the mark is not fsynced, so it alone
   * may be behind after a power cut).
   * Call only under the lock.
   */
  private readLocked(floor: number | null): ParsedLog {
    const path = this.path;
    let parsed: ParsedLog | null;
    try {
      parsed = readLog(path, maxLogBytes(this.context.limits));
    } catch (error) {
      if (!(error instanceof CorruptQueueFileError)) throw error;
      const above = Math.max(salvageSeqFloor(readFileEnds(path, SALVAGE_BYTES)), floor ?? 0, Date.now());
      const aside = moveAside(path, "corrupt");
      this.context.warn(`${error.reason}: moved ${path} aside to ${aside}; the queue starts again, empty`);
      // Written at once, so that the new floor outlives this call even when the caller only reads.
      // A new epoch: the readers' seqs of the old file may be above or below the floor.
      return this.rewrite(emptyQueue(above + 1, mintEpoch()));
    }
    const found = parsed?.queue ?? emptyQueue();
    if (floor !== null && found.next_seq <= floor) {
      const what = parsed ? `went back to seq ${found.next_seq - 1}` : "is missing";
      this.context.warn(
        `${path} ${what} although seq ${floor} was handed out (put back from an older copy, deleted, or cut short by a crash): ` +
          `its messages are kept, and new ones go on from seq ${floor + 1}`,
      );
      // A log put back keeps its epoch (its seqs are the same); a missing one is a new log, with a new epoch.
      return this.rewrite({ ...found, next_seq: floor + 1, epoch: parsed ? found.epoch : mintEpoch() });
    }
    if (!parsed) return parseLog("", path);
    if (parsed.totalBytes > parsed.validBytes) this.truncate(parsed.validBytes);
    return parsed;
  }

  /** Replaces the log with the compact log of `queue`, durably. Call only under the lock. */
  private rewrite(queue: Queue): ParsedLog {
    const text = serializeLog(queue);
    writeFileAtomic(this.path, text);
    return parseLog(text, this.path);
  }

  /** Cuts the log back to `length` bytes (a torn last line). Call only under the lock. */
  private truncate(length: number): void {
    const { fd } = openFile(this.path, "update", Number.MAX_SAFE_INTEGER)!;
    try {
      ftruncateSync(fd, length);
    } finally {
      closeSync(fd);
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The mark's line width: the longest mark fits, and a rewrite in place always covers the one before. */
const MARK_WIDTH = 191;
/** A longer mark was not written by the store. */
const MARK_MAX_BYTES = 256;

/** What a mark records: the queue's state, and the identity of the log it describes. */
interface MarkRecord extends QueueState {
  ino: number;
  size: number;
  ctime: number;
}

/**
 * The seq recorded in the mark at `path`, read without the lock; `null` when there is no
 * mark or what is there is not one (the next write replaces it).
 * @throws UnsafeLayoutError, I/O errors.
 */
function readMarkSeq(path: string): number | null {
  let file: OpenFile | null;
  try {
    file = openFile(path, "read", MARK_MAX_BYTES);
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return null;
    throw error;
  }
  if (!file) return null;
  try {
    return readMarkRecord(file)?.seq ?? null;
  } finally {
    closeSync(file.fd);
  }
}

/** A queue's mark, open for writing. Use only under the queue's lock; close it when done. */
class Mark {
  private constructor(
    private readonly file: OpenFile,
    private readonly path: string,
    private readonly record: MarkRecord | null,
  ) {}

  /**
   * Opens (and makes, mode 0600) the mark at `path`. What is there but is not a regular
   * file of a mark's size is moved aside (`.corrupt-<time>`) and reported to `warn`.
   * @throws UnsafeLayoutError, I/O errors.
   */
  static open(path: string, warn: (message: string) => void): Mark {
    let file: OpenFile;
    try {
      file = openFile(path, "update", MARK_MAX_BYTES)!;
    } catch (error) {
      if (!(error instanceof NotRegularFileError || error instanceof FileTooLargeError)) throw error;
      warn(`${error.message}: moved it aside to ${moveAside(path, "corrupt")}`);
      file = openFile(path, "update", MARK_MAX_BYTES)!;
    }
    try {
      return new Mark(file, path, readMarkRecord(file));
    } catch (error) {
      closeSync(file.fd);
      throw error;
    }
  }

  /** The highest seq recorded as handed out, or `null` when there is no mark yet. */
  get seq(): number | null {
    return this.record?.seq ?? null;
  }

  /** The recorded state when it describes the log whose stats are `log`, else `null`. */
  stateOf(log: Stats): QueueState | null {
    const record = this.record;
    if (!record || record.ino !== log.ino || record.size !== log.size || record.ctime !== log.ctimeMs) return null;
    return { seq: record.seq, count: record.count, bytes: record.bytes };
  }

  /**
   * Records `state` as that of the log whose stats (after the write) are `log`; its seq
   * never goes below the one recorded.
   * @throws I/O errors; the mark is then left as it was or torn, and the next write rebuilds it.
   */
  write(state: QueueState, log: Stats): void {
    // ctime goes last: a line cut short ends, if it parses at all, in the old line's bytes, so its ctime is not the log's now.
    const record: MarkRecord = { ...state, seq: Math.max(state.seq, this.seq ?? 0), ino: log.ino, size: log.size, ctime: log.ctimeMs };
    const line = `${JSON.stringify(record).padEnd(MARK_WIDTH, " ")}\n`;
    writeAll(this.file.fd, line, this.path, 0);
    if (this.file.size > line.length) ftruncateSync(this.file.fd, line.length); // what was there was not a mark
  }

  close(): void {
    closeSync(this.file.fd);
  }
}

/** The record in an open mark, or `null` when it holds none (empty, torn, or not the store's). */
function readMarkRecord(file: OpenFile): MarkRecord | null {
  const buffer = Buffer.alloc(file.size);
  readSync(file.fd, buffer, 0, file.size, 0);
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString("utf8"));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const record = value as Record<string, unknown>;
  const counts = [record.seq, record.count, record.bytes, record.size];
  if (!counts.every((count) => Number.isSafeInteger(count) && (count as number) >= 0)) return null;
  return typeof record.ino === "number" && typeof record.ctime === "number" ? (record as unknown as MarkRecord) : null;
}
