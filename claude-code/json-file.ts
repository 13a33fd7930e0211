/**
 * Reading a small JSON file that may not exist (settings.json, the stash). It imports
 * only Node's fs: the status line reads the stash on every run and must start fast.
 *
 * The file is opened without blocking and must be a regular file: a named pipe at the
 * path would otherwise hold the command until something writes to it (for ever, for a
 * status line), and a device could be read without end.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { JsonValue } from "../core/json.js";

/** Largest JSON file read: 4 MiB, far above any settings file or stash. */
export const MAX_JSON_FILE_BYTES = 4 * 1024 * 1024;

/** A path that holds something other than a JSON file of ours could be: not a regular file, or too large. */
export class NotAJsonFileError extends Error {
  override readonly name = "NotAJsonFileError";
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

/**
 * The parsed content of the JSON file at `path`.
 * @returns `undefined` when there is no file (a file may hold `null`).
 * @throws NotAJsonFileError when it is not a regular file or is over {@link MAX_JSON_FILE_BYTES};
 *   SyntaxError when it is not JSON; other I/O errors as they are.
 */
export function readJsonFile(path: string): JsonValue | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotAJsonFileError(path, "it is not a regular file (a named pipe, a device or a folder)");
    // One byte past the limit, so that a file that grew since fstat is still caught.
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_JSON_FILE_BYTES) + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) read = readSync(fd, buffer, length, buffer.length - length, length);
    if (length > MAX_JSON_FILE_BYTES)
      throw new NotAJsonFileError(path, `it is larger than ${MAX_JSON_FILE_BYTES} bytes, too large to be a settings file`);
    return JSON.parse(buffer.toString("utf8", 0, length)) as JsonValue;
  } finally {
    closeSync(fd);
  }
}
