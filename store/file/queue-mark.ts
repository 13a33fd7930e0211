/**
 * The mark of a queue, `<queue>.seq` beside its log (core/paths.ts): what an append
 * needs, kept so that it reads one short line instead of the whole log. It holds the
 * highest seq the queue handed out, the count and bytes of its live messages, and the
 * identity of the log it describes (inode, size, ctime: the kernel sets ctime on every
 * change, and no one can set it back).
 *
 * Invariants:
 * - the log is the truth and the mark a cache of it: its count and bytes are used only
 *   while the log is the very file it describes. A log that differs (a crash between the
 *   log's write and the mark's, a torn record, a file put back from a copy, edited or
 *   replaced) is read whole once, under the lock, and the mark written again
 *   (./queue-log.ts `queueState`);
 * - its `seq` is trusted even when the log differs: it is a floor, so a log put back from
 *   an older copy goes on above every seq handed out;
 * - it is written under the queue's lock, after the log's record, in one write of one
 *   fixed-width line at offset 0 (within one disk sector: after a power cut it is the old
 *   line or the new one, and anything else does not parse and is rebuilt from the log);
 * - it is not fsynced: the log is the durable record. A mark that a power cut left behind
 *   or ahead of the log no longer describes it; one ahead only makes seqs skip, which is
 *   harmless (seqs must never repeat, they need not be contiguous).
 */
import { closeSync, ftruncateSync, readSync, type Stats } from "node:fs";
import { moveAside } from "../../core/fs/aside.js";
import { openFile, type OpenFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";
import { writeAll } from "../../core/fs/write-all.js";

/** What the limits and the next seq of an append need to know of a queue. */
export interface QueueState {
  /** The highest seq handed out; 0 when none was. */
  seq: number;
  /** Live messages. */
  count: number;
  /** Bytes of the live messages (store/validate.ts `messageBytes`: the measure of the queue's byte limit). */
  bytes: number;
}

/** The line's width: the longest mark fits, and a rewrite in place always covers the one before. */
const MARK_WIDTH = 191;
/** A longer file was not written by the store. */
const MARK_MAX_BYTES = 256;

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
export function readMarkSeq(path: string): number | null {
  let file: OpenFile | null;
  try {
    file = openFile(path, "read", MARK_MAX_BYTES);
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return null;
    throw error;
  }
  if (!file) return null;
  try {
    return readRecord(file)?.seq ?? null;
  } finally {
    closeSync(file.fd);
  }
}

/** The mark of a queue, open for writing. Use only under the queue's lock; close it when done. */
export class QueueMark {
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
  static open(path: string, warn: (message: string) => void): QueueMark {
    let file: OpenFile;
    try {
      file = openFile(path, "update", MARK_MAX_BYTES)!;
    } catch (error) {
      if (!(error instanceof NotRegularFileError || error instanceof FileTooLargeError)) throw error;
      warn(`${error.message}: moved it aside to ${moveAside(path, "corrupt")}`);
      file = openFile(path, "update", MARK_MAX_BYTES)!;
    }
    try {
      return new QueueMark(file, path, readRecord(file));
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
   * Records `state` as that of the log whose stats (after the write) are `log`.
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
function readRecord(file: OpenFile): MarkRecord | null {
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
