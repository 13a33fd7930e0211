/**
 * Per-channel state documents, `state.<name>.json` in the channel folder: an app's own
 * data (the reader's document and threads, which session a channel belongs to).
 *
 * Invariants: a state file is changed only under its lock, by atomic replacement, so a
 * reader without the lock sees a whole document; a document over the limit is refused
 * and the stored one stays as it was.
 */
import type { JsonValue } from "../../protocol/message.js";
import { StateTooLargeError } from "../errors.js";
import { writeFileAtomic } from "./atomic-write.js";
import { withLock } from "./lock.js";
import { NotRegularFileError, readRegularFile } from "./safe-read.js";

/**
 * The value of the state file at `path`, or `null` when there is none. A state file that
 * does not parse, or is not a regular file, reads as missing: state documents are
 * rebuilt by the app that owns them.
 */
export function readStateFile(path: string): JsonValue | null {
  let text: string | null;
  try {
    text = readRegularFile(path);
  } catch (error) {
    if (error instanceof NotRegularFileError) return null;
    throw error;
  }
  if (text === null) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}

/**
 * Changes the state file at `path` under its lock: `update` gets the current value and
 * returns the new one.
 * @returns the new value.
 * @throws StateTooLargeError (nothing changed), LockTimeoutError, whatever `update` throws.
 */
export function updateStateFile(
  path: string,
  name: string,
  limits: { maxStateBytes: number; lockStaleMs: number },
  update: (current: JsonValue | null) => JsonValue,
): Promise<JsonValue> {
  return withLock(path, limits.lockStaleMs, (lock) => {
    const next = update(readStateFile(path));
    const text = JSON.stringify(next);
    const bytes = Buffer.byteLength(text);
    if (bytes > limits.maxStateBytes) throw new StateTooLargeError(name, bytes, limits.maxStateBytes);
    lock.assertHeld();
    writeFileAtomic(path, text);
    return next;
  });
}
