/**
 * Inter-process locks on queue and state files, through proper-lockfile (a
 * `<file>.lock` folder made with mkdir, which is atomic on every OS and on network
 * file systems).
 *
 * Invariants:
 * - a holder refreshes its lock's mtime every `staleMs / 4` (at least every second),
 *   so a live holder's lock is never taken as stale;
 * - a lock whose mtime is older than `staleMs` belongs to a killed process and is
 *   broken by the next process that wants it, so a crash delays others by at most
 *   about `staleMs`;
 * - a stale lock is broken only under a second lock, `<file>.lock.break`, after its
 *   staleness is checked again: when several waiters find the same stale lock, one
 *   breaks it and the others cannot remove the fresh lock a winner made meanwhile.
 *   (proper-lockfile's own stale breaking checks and removes without such a guard,
 *   which lets two processes hold the lock at once under a herd of waiters; a test
 *   that kills writers under load caught it, so its stale breaking is turned off here.)
 * - a waiter retries after a short back-off (1 ms, doubling up to 10 ms, with full
 *   jitter) and gives up after three stale periods. Waking waiters on file-system
 *   events was tried and measured worse: every waiter woke on every creation and
 *   removal of the lock folder, and on two cores the herd took the CPU from the holder.
 *
 * Each attempt is synchronous (mkdir, and a stat when the lock is taken): a few
 * microseconds, against a few hundred for the same calls through libuv's thread pool,
 * and lock hand-over time bounds how many writes per second several processes get.
 */
import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import lockfile from "proper-lockfile";
import { LockTimeoutError } from "../errors.js";

/** Longest wait between two attempts. */
const MAX_RETRY_MS = 10;
/** proper-lockfile's `stale`, set beyond reach: stale locks are broken by {@link breakIfStale}. */
const NEVER_STALE_MS = 2 ** 31 - 1;

/** Handed to the action run under a lock. */
export interface HeldLock {
  /**
   * Throws when this process lost the lock (it stalled for longer than the stale
   * time and another process broke it). Call it right before committing a write.
   */
  assertHeld(): void;
}

/**
 * Runs `action` while holding the lock of `path` (the file need not exist).
 * @throws LockTimeoutError when the lock stays busy for three stale periods;
 *   whatever `action` throws, after releasing the lock.
 */
export async function withLock<T>(path: string, staleMs: number, action: (lock: HeldLock) => Promise<T> | T): Promise<T> {
  let compromised: Error | undefined;
  const release = await acquire(path, staleMs, (error) => {
    // The default throws from a timer and would crash the process. A lock is
    // compromised only when this process stalled for longer than `staleMs`; the
    // action's next `assertHeld` then fails rather than overwrite another writer's change.
    compromised = error;
  });
  try {
    return await action({
      assertHeld() {
        if (compromised) throw new Error(`lost the lock of ${path} (${compromised.message}); try again`);
      },
    });
  } finally {
    if (!compromised) {
      try {
        release();
      } catch {
        // Already released or broken: nothing of ours is left to clean.
      }
    }
  }
}

async function acquire(path: string, staleMs: number, onCompromised: (error: Error) => void): Promise<() => void> {
  const options = {
    realpath: false,
    stale: NEVER_STALE_MS,
    update: Math.max(1000, Math.floor(staleMs / 4)),
    onCompromised,
  };
  const lockDir = `${path}.lock`;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return lockfile.lockSync(path, options);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
    }
    if (breakIfStale(lockDir, staleMs)) continue;
    const waited = Date.now() - started;
    if (waited > 3 * staleMs) throw new LockTimeoutError(path, waited);
    const ceiling = Math.min(MAX_RETRY_MS, 2 ** Math.min(attempt, 4));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
  }
}

/**
 * Removes the lock folder `lockDir` when its mtime is older than `staleMs`, under the
 * guard folder `<lockDir>.break`, re-checking staleness once the guard is held.
 * A guard left by a process killed while breaking is itself broken once stale.
 * @returns true when the lock is gone (removed here, or released meanwhile).
 */
function breakIfStale(lockDir: string, staleMs: number): boolean {
  if (!isStale(lockDir, staleMs)) return false;
  const guard = `${lockDir}.break`;
  try {
    mkdirSync(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (isStale(guard, staleMs)) removeDir(guard);
    return false;
  }
  try {
    if (isStale(lockDir, staleMs)) removeDir(lockDir);
    return true;
  } finally {
    removeDir(guard);
  }
}

/** True when `dir` exists and was last touched more than `staleMs` ago; a missing folder is not stale. */
function isStale(dir: string, staleMs: number): boolean {
  try {
    return lstatSync(dir).mtimeMs < Date.now() - staleMs;
  } catch {
    return false;
  }
}

function removeDir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
