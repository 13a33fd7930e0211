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
import type { Limits } from "../../core/limits.js";
import type { JsonValue } from "../../protocol/message.js";
import { StateTooLargeError } from "../errors.js";
import { moveAside } from "../../core/fs/aside.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { type LockOptions, withLock } from "../../core/fs/lock.js";
import { readTextFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";
import { maxStateFileBytes, parseState } from "./state-read.js";

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
