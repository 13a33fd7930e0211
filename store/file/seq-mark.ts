/**
 * The seq high-water mark of a queue, `<queue>.seq` beside it (core/paths.ts): the
 * highest seq the queue ever handed out, kept apart from the queue file so that a queue
 * file put back from an older copy (a restored backup, a sync tool) is caught: its
 * `next_seq` is then at or below the mark, and the queue goes on above the mark instead
 * of handing out seqs a reader has already passed.
 *
 * Invariants:
 * - the mark is raised under the queue's lock, after the record is written, with every
 *   append; it only grows;
 * - the log stays the durable record (the mark is not fsynced: a mark behind the log
 *   after a power cut is raised by the next append, and one ahead only skips seqs, which
 *   is harmless: seqs must never repeat, they need not be contiguous);
 * - the file is one fixed-width line, rewritten in place with one write.
 */
import { closeSync, ftruncateSync, readSync } from "node:fs";
import { moveAside } from "../../core/fs/aside.js";
import { openFile, type OpenFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";
import { writeAll } from "../../core/fs/write-all.js";

/** A mark is one short line; a longer file was not written by the store. */
const MARK_MAX_BYTES = 64;
/** Wide enough for any safe integer, so that a rewrite in place always covers the old line. */
const MARK_WIDTH = 16;

/**
 * The mark at `path`, or `null` when there is none, or what is there is not a mark (the
 * next append moves it aside).
 * @throws UnsafeLayoutError, I/O errors.
 */
export function readSeqMark(path: string): number | null {
  let file: OpenFile | null;
  try {
    file = openFile(path, "read", MARK_MAX_BYTES);
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return null;
    throw error;
  }
  if (!file) return null;
  try {
    return readValue(file.fd, file.size);
  } finally {
    closeSync(file.fd);
  }
}

/** The mark of a queue, open for raising. Call only under the queue's lock; close it when done. */
export class SeqMark {
  private constructor(
    private readonly fd: number,
    private readonly path: string,
    /** The highest seq handed out, as recorded, or `null` when there is no record yet. */
    readonly value: number | null,
    private readonly size: number,
  ) {}

  /**
   * Opens (and makes, mode 0600) the mark at `path`. What is there but is not a regular
   * file of a mark's size is moved aside (`.corrupt-<time>`) and reported to `warn`.
   * @throws UnsafeLayoutError, I/O errors.
   */
  static open(path: string, warn: (message: string) => void): SeqMark {
    let file: OpenFile;
    try {
      file = openFile(path, "update", MARK_MAX_BYTES)!;
    } catch (error) {
      if (!(error instanceof NotRegularFileError || error instanceof FileTooLargeError)) throw error;
      warn(`${error.message}: moved it aside to ${moveAside(path, "corrupt")}`);
      file = openFile(path, "update", MARK_MAX_BYTES)!;
    }
    try {
      return new SeqMark(file.fd, path, readValue(file.fd, file.size), file.size);
    } catch (error) {
      closeSync(file.fd);
      throw error;
    }
  }

  /** Records `seq` as handed out, when it is above the mark. */
  raise(seq: number): void {
    if (this.value !== null && seq <= this.value) return;
    const line = `${String(seq).padStart(MARK_WIDTH, " ")}\n`;
    writeAll(this.fd, line, this.path, 0);
    if (this.size > line.length) ftruncateSync(this.fd, line.length); // what was there was not a mark
  }

  close(): void {
    closeSync(this.fd);
  }
}

function readValue(fd: number, size: number): number | null {
  const buffer = Buffer.alloc(size);
  readSync(fd, buffer, 0, size, 0);
  const value = Number(buffer.toString("utf8").trim());
  return buffer.length > 0 && Number.isSafeInteger(value) && value >= 0 ? value : null;
}
