/**
 * A host's output as one JSON event a line (`claude -p --output-format stream-json`,
 * `gemini -p -o stream-json`): every line parsed as it comes (one that is not JSON kept
 * as `{type: "unparsed", line}`), and a wait for an event that ends when the host exits.
 */
import type { ChildProcess } from "node:child_process";
import { nextWake } from "./claude-code/next-wake.js";

/** An event of a host's stream. */
export interface StreamEvent {
  type: string;
  subtype?: string;
  [key: string]: unknown;
}

/** What {@link readJsonLines} keeps. */
export interface JsonLines {
  /** Every line printed on stdout so far, parsed. */
  events: StreamEvent[];
  /** Whether the process has exited. */
  closed(): boolean;
  /**
   * Resolves with the first event at or after `from` that `match` accepts.
   * @throws when the process exits or `timeoutMs` (default 60,000) passes first.
   */
  waitForEvent(match: (event: StreamEvent) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<StreamEvent>;
}

/** Reads `child`'s stdout as JSON lines; `host` and `stderr` name it and say what it said in an error. */
export function readJsonLines(child: ChildProcess, host: string, stderr: () => string): JsonLines {
  const events: StreamEvent[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  let closed = false;
  const wakeAll = () => {
    for (const wake of waiters) wake();
  };
  child.stdout!.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const line of lines.filter((text) => text.trim() !== "")) {
      try {
        events.push(JSON.parse(line) as StreamEvent);
      } catch {
        events.push({ type: "unparsed", line });
      }
    }
    wakeAll();
  });
  child.on("close", () => {
    closed = true;
    wakeAll();
  });
  return {
    events,
    closed: () => closed,
    async waitForEvent(match, { from = 0, timeoutMs = 60_000 } = {}) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (closed) throw new Error(`${host} exited (${child.exitCode}) before the event came: ${stderr().slice(-2000)}`);
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no matching event from ${host} within ${timeoutMs} ms (${events.length} events so far)`);
        await nextWake(waiters, left);
      }
    },
  };
}
