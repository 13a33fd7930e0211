/**
 * The baseline's exclusive lock: proper-lockfile's asynchronous lock with a plain
 * capped back-off (1 ms first, up to 20 ms, with jitter). Kept here rather than
 * borrowed from server/store, so that the baseline stays the same design while the
 * store's own locking is tuned.
 */
import lockfile from "proper-lockfile";

/** A lock older than this belongs to a dead process. */
const STALE_MS = 5000;

/**
 * Runs `action` while holding the lock of `path` (the file need not exist).
 * @throws proper-lockfile's ELOCKED error when the lock stays busy for about 15 s.
 */
export async function withExclusiveLock<T>(path: string, action: () => Promise<T>): Promise<T> {
  const release = await lockfile.lock(path, {
    realpath: false,
    stale: STALE_MS,
    retries: { retries: 750, factor: 1.5, minTimeout: 1, maxTimeout: 20, randomize: true },
    onCompromised: () => undefined,
  });
  try {
    return await action();
  } finally {
    await release().catch(() => undefined);
  }
}
