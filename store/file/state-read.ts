/**
 * Reading a state document's file (./state-files.ts), without its lock: a writer
 * replaces the file atomically, so a reader sees a whole document. Apart from the
 * writer's module so that the read-only view (./queue-reader.ts) loads no lock code.
 */
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import type { JsonValue } from "../../protocol/message.js";
import { readTextFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";

/**
 * The largest state file read: twice the larger of this process's limit and the
 * default, so that a process with a smaller limit still reads what another wrote.
 */
export function maxStateFileBytes(limits: Pick<Limits, "maxStateBytes">): number {
  return 2 * Math.max(limits.maxStateBytes, DEFAULT_LIMITS.maxStateBytes);
}

/**
 * The value of the state file at `path`, or `null` when there is none. A state file that
 * does not parse, is not a regular file or is too large reads as missing: state
 * documents are rebuilt by the app that owns them.
 * @throws UnsafeLayoutError; I/O errors other than a missing file.
 */
export function readStateFile(path: string, maxBytes: number): JsonValue | null {
  try {
    return parseState(readTextFile(path, maxBytes));
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return null;
    throw error;
  }
}

/** The value in a state file's text; `null` for none, or for text that is not JSON. */
export function parseState(text: string | null): JsonValue | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}
