/**
 * Names that survive a power cut.
 *
 * A file's name lives in its folder, not in the file: fsync of a file makes its bytes
 * durable, but the entry that a create or a rename made in the folder is durable only
 * once the folder itself is fsynced. Until then a power cut can leave the old name
 * (the file before a rename, no file after a create), even though the file was synced.
 *
 * The rule, kept here and by the callers of these functions: **an acknowledgement that
 * depends on a create or a rename comes only after the file and its folder are
 * fsynced** (./atomic-write.ts for replacements; {@link makeFolder} for folders; the
 * file store's first append to a new log, store/file/queue-log.ts).
 */
import { closeSync, constants, fsyncSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

const DIRECTORY = constants.O_DIRECTORY ?? 0;

/**
 * Fsyncs the folder at `path`, so that what was created, renamed or removed in it
 * survives a power cut. Nothing on Windows, where a folder cannot be opened for fsync
 * and NTFS journals its entries itself; nothing on a file system that cannot sync a
 * folder (it answers EINVAL or ENOTSUP: a name there is as durable as it makes it).
 * @throws the I/O error of the open or the fsync (EIO, EACCES, …).
 */
export function syncFolder(path: string): void {
  if (process.platform === "win32") return;
  const fd = openSync(path, constants.O_RDONLY | DIRECTORY);
  try {
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "ENOTSUP") throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes the folder `path` (with `mode`, default 0777 less the umask), and with
 * `parents` every missing folder above it, each made durable: its parent is fsynced
 * once it exists.
 * @returns true when this call made `path`; false when it already existed (with `parents`).
 * @throws EEXIST (without `parents`, when `path` exists); other I/O errors.
 */
export function makeFolder(path: string, options: { mode?: number; parents?: boolean } = {}): boolean {
  const { mode, parents = false } = options;
  if (parents) {
    const made = mkdirSync(path, { recursive: true, mode });
    if (made === undefined) return false;
    // `made` is the first folder made; every folder from its parent down to `path`'s parent gained an entry.
    for (let folder = path; folder !== dirname(made); folder = dirname(folder)) syncFolder(dirname(folder));
    return true;
  }
  mkdirSync(path, { mode });
  syncFolder(dirname(path));
  return true;
}
