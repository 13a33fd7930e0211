/**
 * The app's side of a channel as the benchmark drives it: a loop of
 * `poll_ui_messages` calls with a cursor, shaped by the design (one 30 s long-poll after
 * another for backchannel, a short poll every 1,200 ms for the baseline). It counts its
 * calls and keeps every message with the moment its poll returned.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Design } from "./designs.js";
import type { ServerProcess } from "./procs/server.js";
import type { QueueMessage } from "../protocol/message.js";

/** A message the app received and when its poll returned (`performance.now()`). */
export interface Received {
  message: QueueMessage;
  at: number;
}

interface PollResult {
  messages: QueueMessage[];
  cursor: number;
}

/** A running app loop on one channel. */
export class AppReader {
  /** `poll_ui_messages` calls started so far. */
  calls = 0;
  private cursor = 0;
  private readonly inbox: Received[] = [];
  private readonly seen = new Set<number>();
  private readonly stopper = new AbortController();
  private wake: (() => void) | undefined;
  private failure: Error | undefined;
  private readonly loop: Promise<void>;

  /** Starts reading `channelId` through `server`, for at most `maxMs`. */
  constructor(
    private readonly server: ServerProcess,
    private readonly channelId: string,
    private readonly design: Design,
    maxMs: number,
  ) {
    this.loop = this.run(performance.now() + maxMs).catch((error: Error) => {
      if (!this.stopper.signal.aborted) this.failure = error;
    });
  }

  /**
   * The next message not yet taken.
   * @throws when none comes within `timeoutMs`, or the loop failed.
   */
  async next(timeoutMs: number): Promise<Received> {
    const deadline = performance.now() + timeoutMs;
    while (this.inbox.length === 0) {
      if (this.failure) throw this.failure;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`${this.design.name} app received nothing within ${timeoutMs} ms on ${this.channelId}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.inbox.shift()!;
  }

  /** Stops the loop, cancelling a poll in flight (the SDK sends notifications/cancelled). */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(deadline: number): Promise<void> {
    const signal = this.stopper.signal;
    const args = (cursor: number) =>
      this.design.appWaitMs > 0
        ? { channel_id: this.channelId, after: cursor, wait_ms: this.design.appWaitMs }
        : { channel_id: this.channelId, after: cursor };
    let nextStart = performance.now();
    while (!signal.aborted && performance.now() < deadline) {
      this.calls += 1;
      const result = await this.server.call<PollResult>("poll_ui_messages", args(this.cursor), signal);
      const at = performance.now();
      for (const message of result.messages) {
        // At-least-once: a repeat is possible by design and dropped by seq, as the app does.
        if (this.seen.has(message.seq)) continue;
        this.seen.add(message.seq);
        this.inbox.push({ message, at });
      }
      this.cursor = result.cursor;
      this.wake?.();
      nextStart += this.design.appIntervalMs;
      const pause = nextStart - performance.now();
      if (pause > 0) await sleep(pause, undefined, { signal }).catch(() => undefined);
      else nextStart = performance.now();
    }
  }
}
