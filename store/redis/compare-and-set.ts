/**
 * The retry loop of an optimistic change (a state document, a session record): read,
 * compute, and store only if nobody stored in between (a compare-and-set script);
 * otherwise compute again from the newer value. No lock is held, so a writer that dies
 * holds nobody up.
 */
import { LockTimeoutError } from "../../core/fs/errors.js";

/** How long a change keeps retrying against other writers before it gives up. */
const PATIENCE_MS = 15_000;

/**
 * Runs `attempt` until it stores its change.
 * @param what names the thing changed in the error, e.g. "the session record claude-1".
 * @param attempt reads, computes and tries to store; resolves with the stored value, or
 *   `undefined` when another writer came first.
 * @throws LockTimeoutError when other writers kept coming first for 15 s; whatever `attempt` throws.
 */
export async function untilStored<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  const started = Date.now();
  for (let tries = 1; ; tries += 1) {
    const stored = await attempt();
    if (stored !== undefined) return stored;
    const waited = Date.now() - started;
    if (waited > PATIENCE_MS) throw new LockTimeoutError(what, waited);
    // After a few collisions, a short random pause, so that busy writers stop colliding.
    if (tries >= 3) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, tries * 5)));
  }
}
