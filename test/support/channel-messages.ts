/** The messages an app's channel delivers, collected for a test to wait on and read. */
import type { AppChannel, ChannelMessage } from "backchannel-mcp/app";
import { nextWake } from "./claude-code/next-wake.js";

/** What {@link collectMessages} gives. */
export interface CollectedMessages {
  /** Every message delivered so far, in order. */
  seen: ChannelMessage[];
  /**
   * Resolves once `count` messages were delivered.
   * @throws an Error naming the `n` of those that came, once `timeoutMs` (default 60,000) passed first.
   */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
}

/** Collects every message `channel` delivers from now on. */
export function collectMessages(channel: AppChannel): CollectedMessages {
  const seen: ChannelMessage[] = [];
  const waiters = new Set<() => void>();
  channel.on("*", (_data, message) => {
    seen.push(message);
    for (const wake of waiters) wake();
  });
  return {
    seen,
    async waitFor(count, timeoutMs = 60_000) {
      const deadline = performance.now() + timeoutMs;
      while (seen.length < count) {
        const left = deadline - performance.now();
        const numbers = seen.map((message) => (message.data as { n?: number }).n);
        if (left <= 0) throw new Error(`${seen.length} of ${count} messages delivered within ${timeoutMs} ms: n = ${JSON.stringify(numbers)}`);
        await nextWake(waiters, left);
      }
    },
  };
}
