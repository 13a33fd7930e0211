/**
 * Per-channel state documents, `state.<name>.json` in the channel folder: an app's own
 * data (the reader's document and threads, which session a channel belongs to).
 *
 * Invariants: a state file is read through core/fs/safe-open.ts (no link followed, never
 * blocking, a regular file of this user within {@link maxStateFileBytes}); it is changed
 * only under its lock, by atomic replacement, so a reader without the lock sees a whole
 * document; a document over the limit is refused and the stored one stays as it was;
 * something else in a state file's place is moved aside by the next write.
 */
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import type { JsonValue } from "../../protocol/message.js";
import { StateTooLargeError } from "../errors.js";
import { moveAside } from "../../core/fs/aside.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { type LockOptions, withLock } from "../../core/fs/lock.js";
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

/**
 * Changes the state file at `path` under its lock: `update` gets the current value and
 * returns the new one. What is in the file's place but is not a regular file of a
 * state's size is moved aside first (`.corrupt-<time>`) and reported.
 * @returns the new value.
 * @throws StateTooLargeError (nothing changed), LockTimeoutError, whatever `update` throws.
 */
export function updateStateFile(
  path: string,
  name: string,
  limits: Pick<Limits, "maxStateBytes">,
  lock: LockOptions & { warn: (message: string) => void },
  update: (current: JsonValue | null) => JsonValue,
): Promise<JsonValue> {
  return withLock(path, lock, (held) => {
    let current: JsonValue | null;
    try {
      current = parseState(readTextFile(path, maxStateFileBytes(limits)));
    } catch (error) {
      if (!(error instanceof NotRegularFileError || error instanceof FileTooLargeError)) throw error;
      lock.warn(`${error.message}: moved it aside to ${moveAside(path, "corrupt")}`);
      current = null;
    }
    const next = update(current);
    const text = JSON.stringify(next);
    const bytes = Buffer.byteLength(text);
    if (bytes > limits.maxStateBytes) throw new StateTooLargeError(name, bytes, limits.maxStateBytes);
    held.assertHeld();
    writeFileAtomic(path, text);
    return next;
  });
}

/** The value in a state file's text; `null` for none, or for text that is not JSON. */
function parseState(text: string | null): JsonValue | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}
