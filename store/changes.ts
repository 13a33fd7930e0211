/**
 * The one loop every waiter runs (a long-poll, the watcher, the agent inbox, the wall):
 * subscribe, read, then wait for a change and read again.
 *
 * Invariant: the subscription is made before the first read, and a subscription
 * remembers a change until it is waited for, so a change that lands between a read and
 * the wait that follows still wakes the waiter. Changes are hints: a waiter re-reads
 * after every wake-up, a timeout included (some file systems send no events).
 */
import type { ChangeSubscription, PollResult } from "./store.js";

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

/** Options of {@link pollWithWait}. */
export interface WaitingPollOptions {
  /** When nothing is pending, wait up to this long for a message. */
  waitMs: number;
  /** Read again at least this often, change or not. */
  fallbackMs: number;
  /** Ends the wait early (the poll then returns what it has, possibly nothing). */
  signal?: AbortSignal;
  /** Called once when the first read found nothing and the wait starts. */
  onWaiting?: () => void;
}

/**
 * A long-poll: reads with `pollOnce`, and while it finds nothing, reads again after every
 * change of `subscription` until a message comes, `waitMs` has passed or `signal`
 * aborts. Closes `subscription`, however it ends.
 * @returns the first read that found messages, else the last read (empty); `undefined`
 *   when `signal` had aborted before the first read.
 * @throws whatever `pollOnce` throws (which ends the wait).
 */
export async function pollWithWait(
  subscription: ChangeSubscription,
  pollOnce: () => Promise<PollResult>,
  options: WaitingPollOptions,
): Promise<PollResult | undefined> {
  const { waitMs, fallbackMs, signal, onWaiting } = options;
  let result: PollResult | undefined;
  for await (const wake of changes(subscription, { fallbackMs, deadline: Date.now() + waitMs, signal })) {
    result = await pollOnce();
    if (result.messages.length > 0) break;
    if (wake === "start") onWaiting?.();
  }
  return result;
}
