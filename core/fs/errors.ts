/**
 * Errors of the safe file-system helpers. Each message names the path and says what to do.
 */
import { CallerError } from "../errors.js";

/** A folder or file of the data directory that another user owns or can write; the message says what to run. */
export class UnsafeLayoutError extends CallerError {
  override readonly name = "UnsafeLayoutError";
  override readonly code = "UNSAFE_LAYOUT";
  constructor(
    readonly path: string,
    /** What is wrong: `owner` (another user's) or `mode` (writable by group or others). */
    readonly problem: "owner" | "mode",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Thrown when a path of the layout holds something other than what belongs there (a
 * regular file, or a folder). Writers move such things aside; a reader reports this.
 */
export class NotRegularFileError extends CallerError {
  override readonly name = "NotRegularFileError";
  override readonly code = "NOT_REGULAR_FILE";
  constructor(
    readonly path: string,
    /** What is there instead: `a symbolic link`, `a folder`, `a named pipe`, `a file`, … */
    readonly found: string,
    expected = "a regular file",
  ) {
    super(`${path} is ${found}, not ${expected}`);
  }
}

/** Thrown when a file of the layout is larger than its kind can be (a sparse or runaway file). */
export class FileTooLargeError extends CallerError {
  override readonly name = "FileTooLargeError";
  override readonly code = "FILE_TOO_LARGE";
  constructor(
    readonly path: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`${path} is ${bytes} bytes, more than the ${maxBytes} such a file can hold`);
  }
}

/** A lock (of a file, or a Redis document's compare-and-set) stayed busy longer than the store waits for it. */
export class LockTimeoutError extends CallerError {
  override readonly name = "LockTimeoutError";
  override readonly code = "LOCK_TIMEOUT";
  constructor(
    readonly path: string,
    readonly waitedMs: number,
    /** Who holds the lock, in words, when the store knows. */
    readonly holder?: string,
  ) {
    super(`${path} stayed locked by ${holder ?? "another process"} for ${waitedMs} ms; try again in a moment`);
  }
}

/**
 * Another process broke this process's lock while this one stalled (longer than the
 * stale time, unseen by a waiter that could not check it directly); nothing was committed.
 */
export class LockLostError extends CallerError {
  override readonly name = "LockLostError";
  override readonly code = "LOCK_LOST";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`lost the lock of ${path} (${reason}); nothing was written, try again`);
  }
}
