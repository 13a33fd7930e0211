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
 * - a waiter retries the moment the lock folder is removed (a file-system event on
 *   the folder that holds it), with a short capped back-off as the fallback, so the
 *   lock passes from process to process without idle gaps; it gives up after three
 *   stale periods.
 *
 * Each attempt is synchronous (mkdir, and a stat when the lock is taken): a few
 * microseconds, against a few hundred for the same calls through libuv's thread pool,
 * and lock hand-over time bounds how many writes per second several processes get.
 */
import { basename, dirname } from "node:path";
import lockfile from "proper-lockfile";
import { subscribeToFile, type FileSubscription } from "./change-watch.js";
import { LockTimeoutError } from "./errors.js";

/** Longest fallback wait between two attempts, when no file-system event comes. */
const MAX_RETRY_MS = 8;

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
    stale: staleMs,
    update: Math.max(1000, Math.floor(staleMs / 4)),
    onCompromised,
  };
  const started = Date.now();
  let subscription: FileSubscription | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return lockfile.lockSync(path, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
      }
      const waited = Date.now() - started;
      if (waited > 3 * staleMs) throw new LockTimeoutError(path, waited);
      if (!subscription) {
        // Subscribe, then try again at once: the holder may have released the lock
        // between the failed attempt and the subscription.
        subscription = subscribeToFile(dirname(path), `${basename(path)}.lock`);
        continue;
      }
      const backoff = Math.min(MAX_RETRY_MS, 2 ** Math.min(attempt, 3)) * (0.5 + Math.random());
      await subscription.next(backoff);
    }
  } finally {
    subscription?.close();
  }
}
