/**
 * Inter-process locks on queue files, through proper-lockfile (a `<file>.lock` folder
 * made with mkdir, which is atomic on every OS and on network file systems).
 *
 * Invariants:
 * - a holder refreshes its lock's mtime every `staleMs / 4`, so a live holder's lock
 *   is never taken as stale;
 * - a lock whose mtime is older than `staleMs` belongs to a killed process and is
 *   broken by the next process that wants it, so a crash delays others by at most
 *   about `staleMs`;
 * - waiting retries quickly at first (1 ms) and backs off to 20 ms with jitter, for
 *   latency under contention, and gives up after three stale periods.
 */
import lockfile from "proper-lockfile";
import { LockTimeoutError } from "./errors.js";

const FIRST_RETRY_MS = 1;
const MAX_RETRY_MS = 20;

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
export async function withLock<T>(path: string, staleMs: number, action: (lock: HeldLock) => Promise<T>): Promise<T> {
  const started = Date.now();
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      realpath: false,
      stale: staleMs,
      update: Math.max(1000, Math.floor(staleMs / 4)),
      retries: {
        retries: Math.ceil((3 * staleMs) / MAX_RETRY_MS),
        factor: 1.5,
        minTimeout: FIRST_RETRY_MS,
        maxTimeout: MAX_RETRY_MS,
        randomize: true,
      },
      // The default throws from a timer and would crash the process. A lock is
      // compromised only when this process stalled for longer than `staleMs`; the
      // action's next `assertHeld` then fails rather than overwrite another writer's change.
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") throw new LockTimeoutError(path, Date.now() - started);
    throw error;
  }
  try {
    return await action({
      assertHeld() {
        if (compromised) throw new Error(`lost the lock of ${path} (${compromised.message}); try again`);
      },
    });
  } finally {
    if (!compromised) await release().catch(() => undefined);
  }
}
