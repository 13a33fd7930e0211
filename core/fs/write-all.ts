/**
 * The one way the file store writes bytes to a file: every byte or an error.
 *
 * `write(2)` may write fewer bytes than asked (a nearly full disk takes what fits, then
 * refuses the rest), and Node's `writeSync` returns that count without complaint. A
 * caller that ignored it would fsync and rename a cut-off file over a whole one. Here
 * the write is repeated for what is left until all is written; a write that makes no
 * progress is an ENOSPC error, as the kernel's next attempt would be.
 */
import { writeSync } from "node:fs";

/**
 * Writes all of `data` to `fd`, at `position` (then onwards) or, when it is omitted, at
 * the file's offset (the end, for a file opened with O_APPEND).
 * @param path the file's path, named in the error.
 * @throws the I/O error (ENOSPC, EROFS, EIO, …) with `path` set, once part or none of
 *   `data` was written: the caller undoes the part (truncates, or removes its temporary file).
 */
export function writeAll(fd: number, data: string | Buffer, path: string, position?: number): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let written = 0;
  try {
    while (written < bytes.length) {
      const at = position === undefined ? null : position + written;
      const count = writeSync(fd, bytes, written, bytes.length - written, at);
      if (count <= 0) throw noProgress();
      written += count;
    }
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    if (typeof failure.code === "string") {
      failure.path ??= path;
      failure.syscall ??= "write";
    }
    throw failure;
  }
}

/** The error of a write that wrote nothing although the kernel reported no error. */
function noProgress(): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error("ENOSPC: no space left on device, write wrote nothing");
  error.code = "ENOSPC";
  error.errno = -28;
  return error;
}

/** True for the errors of a file system that takes no write: read-only (EROFS), not ours to write (EACCES, EPERM), or out of room ({@link isOutOfSpace}). */
export function isUnwritable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "EROFS" || code === "EACCES" || code === "EPERM" || isOutOfSpace(error);
}

/** True for the errors of a disk (or a quota) with no room left: ENOSPC, EDQUOT. */
export function isOutOfSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}
