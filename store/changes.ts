/**
 * The one loop every waiter runs (a long-poll, the watcher, the agent inbox, the wall):
 * subscribe, read, then wait for a change and read again.
 *
 * Invariant: the subscription is made before the first read, and a subscription
 * remembers a change until it is waited for, so a change that lands between a read and
 * the wait that follows still wakes the waiter. Changes are hints: a waiter re-reads
 * after every wake-up, a timeout included (some file systems send no events).
 */
import type { ChangeSubscription } from "./store.js";

/** Why a waiter reads: the first read, a change, or the fallback timer. */
export type Wake = "start" | "changed" | "timeout";

/** Options of {@link changes}. */
export interface ChangesOptions {
  /** Read again at least this often, change or not. */
  fallbackMs: number;
  /** Stop after the read at this time (ms since the epoch). Default: never. */
  deadline?: number;
  /** Stop at once when it aborts. */
  signal?: AbortSignal;
}

/**
 * Yields `"start"` at once, then once per wake-up (`"changed"` or `"timeout"`), until
 * the deadline has passed (after one last read) or `signal` aborts (without one).
 * Closes `subscription` when the loop ends, however it ends.
 */
export async function* changes(subscription: ChangeSubscription, options: ChangesOptions): AsyncGenerator<Wake, void, undefined> {
  const { fallbackMs, deadline = Number.POSITIVE_INFINITY, signal } = options;
  try {
    if (signal?.aborted) return;
    yield "start";
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0 || signal?.aborted) return;
      const woke = await subscription.next(Math.min(remaining, fallbackMs), signal);
      if (woke === "aborted") return;
      yield woke;
    }
  } finally {
    subscription.close();
  }
}
