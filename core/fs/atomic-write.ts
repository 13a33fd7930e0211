/**
 * Whole-file replacement that a reader without a lock can never see half done.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { syncFolder } from "./durable.js";
import { writeAll } from "./write-all.js";

/** The suffix of temporary files; the idle sweep removes old ones left by killed processes. */
export const TEMP_SUFFIX = ".tmp";

/**
 * Writes `text` to `path` atomically and durably: a temporary file in the same folder
 * (mode 0600) is written whole (./write-all.ts: a short write on a nearly full disk is
 * an error, never a cut-off file), fsynced and renamed over `path`, and the folder is
 * fsynced (./durable.ts: without it a power cut can undo the rename). On any error
 * before the rename the temporary file is removed and `path` keeps its previous
 * content, whole; an error of the folder's fsync leaves the new content in place, not
 * known to be durable.
 *
 * Synchronous on purpose: it runs under a lock, and the thread-pool round trips of
 * the asynchronous calls would double the time the lock is held.
 * @throws the underlying I/O error (ENOSPC, EROFS, EACCES, …).
 */
export function writeFileAtomic(path: string, text: string): void {
  const temp = `${path}.${process.pid}-${randomBytes(4).toString("hex")}${TEMP_SUFFIX}`;
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeAll(fd, text, path);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncFolder(dirname(path));
}
