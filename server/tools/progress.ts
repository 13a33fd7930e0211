/**
 * Progress for long-polls: while a poll waits, `notifications/progress` tells the host
 * that the call is alive (Claude Code shows it and resets its idle timeout; VS Code shows
 * the message). Sent only when the call carried a `progressToken`, as the spec requires.
 */
import type { ServerContext } from "@modelcontextprotocol/server";
import { attempt } from "./results.js";

/** A running progress ticker; stop it when the wait ends. */
export interface ProgressTicker {
  /** Starts ticking: one notification now, then one per interval. Does nothing without a progress token. */
  start(): void;
  /** Stops ticking. Safe to call more than once, and before `start`. */
  stop(): void;
}

/**
 * A ticker that reports a wait of `waitMs` on the request of `ctx`, every `intervalMs`
 * (default 5,000 ms), with `describe(elapsed)` as its message.
 */
export function progressTicker(ctx: ServerContext, waitMs: number, describe: (elapsedSeconds: number) => string, intervalMs = 5000): ProgressTicker {
  const token = ctx.mcpReq._meta?.progressToken;
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  const send = () => {
    const elapsed = Date.now() - started;
    const params = { progressToken: token, progress: elapsed, total: waitMs, message: describe(Math.round(elapsed / 1000)) };
    // A notification the connection can no longer carry is dropped: the wait goes on.
    void attempt(
      () => ctx.mcpReq.notify({ method: "notifications/progress", params }),
      () => undefined,
    );
  };
  return {
    start() {
      if (token === undefined || timer) return;
      started = Date.now();
      send();
      timer = setInterval(send, intervalMs);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
