/**
 * The one way the file store and its read-only readers read a file of the data
 * directory: never through a symbolic link, never blocking, only a regular file.
 *
 * - O_NOFOLLOW: a link planted where a file belongs is refused, never read through;
 * - O_NONBLOCK: opening a named pipe planted where a file belongs returns at once
 *   instead of waiting for a writer (and blocking the process's event loop with it);
 * - the opened file is checked with fstat, so the check and the read see one file.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/** Thrown when a path of the layout holds something other than a regular file. */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  constructor(
    readonly path: string,
    /** What is there instead: `a symbolic link`, `a folder`, `a named pipe`, … */
    readonly found: string,
  ) {
    super(`${path} is ${found}, not a regular file`);
  }
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The text (UTF-8) of the regular file at `path`.
 * @returns `null` when there is no file.
 * @throws NotRegularFileError for a link, a folder, a pipe, a socket or a device; other I/O errors as they are.
 */
export function readRegularFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw new NotRegularFileError(path, "a symbolic link");
    if (code === "EISDIR") throw new NotRegularFileError(path, "a folder");
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(path, describeKind(stats));
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

function describeKind(stats: import("node:fs").Stats): string {
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  return "a device";
}
