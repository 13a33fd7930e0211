/**
 * Appending to a queue log: one write under the lock, the fsync after it.
 *
 * The record is written with O_APPEND in one `write` (repeated for the rest only if the
 * kernel takes part of it, core/fs/write-all.ts), so that readers without the lock see it
 * whole or not at all; on any error (a disk that fills partway through the record) the
 * file is cut back to its previous length, so a refused write leaves the queue as it
 * was and is never acknowledged.
 *
 * Invariant: a torn record never becomes part of the log. Until the cut, it is a last
 * line without a newline, which readers ignore; should the cut itself fail or the
 * process die first, the log no longer matches its mark (./queue-mark.ts), so the next
 * writer reads it whole and cuts it under the lock before appending (./queue-log.ts
 * `readLocked`): no record is ever glued onto a torn one.
 *
 * A log written from its start (a new log: its name may be new to its folder) has its
 * folder fsynced too, with the same sync (core/fs/durable.ts).
 *
 * The fsync is left to the caller, to run once the lock is released:
 * several writers' fsyncs then share one journal commit, and the lock is held for
 * microseconds instead of the millisecond an fsync takes.
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { syncFolder } from "../../core/fs/durable.js";
import { openFile } from "../../core/fs/safe-open.js";
import { writeAll } from "../../core/fs/write-all.js";

/** A write that is done but not yet durable. */
export interface PendingSync {
  /** Makes the write durable (fdatasync, and the folder's fsync for a new log) and closes the file. Call it exactly once, after releasing the lock. */
  sync(): void;
}

/** A write that is already durable (a whole-file replacement fsyncs before its rename). */
export const ALREADY_DURABLE: PendingSync = { sync() {} };

/** An append done: the log's stats after it (for its mark), and its fsync to come. */
export interface Appended {
  stats: Stats;
  pending: PendingSync;
}

/**
 * Appends `text` to the log at `path`, whose first `validBytes` bytes are its whole
 * records, opened through core/fs/safe-open.ts (no link followed, never blocking, a regular
 * file of this user; a new file is made 0600). Call only under the queue's lock.
 * @throws the I/O error (ENOSPC, EROFS, …), after cutting the file back to `validBytes`;
 *   NotRegularFileError, UnsafeLayoutError when something else took the log's place.
 */
export function appendToLog(path: string, text: string, validBytes: number): Appended {
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
  const pending = {
    sync() {
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
      if (validBytes === 0) syncFolder(dirname(path));
    },
  };
  return { stats, pending };
}

/**
 * Cuts the log at `path` back to `length` bytes (a torn last line), opened through
 * core/fs/safe-open.ts. Call only under the queue's lock.
 */
export function truncateLog(path: string, length: number): void {
  const { fd } = openFile(path, "update", Number.MAX_SAFE_INTEGER)!;
  try {
    ftruncateSync(fd, length);
  } finally {
    closeSync(fd);
  }
}
