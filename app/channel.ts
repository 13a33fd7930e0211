/**
 * The app side of a backchannel channel, over ext-apps' `App`: it
 * receives the agent's events through the app-only `poll_ui_messages` and sends its
 * own through `notify_agent`.
 *
 * - Receiving is at-least-once: every poll passes the highest seq handled as `after`,
 *   which acknowledges what came before; a response lost on the way is returned again
 *   by the next poll, and a seq is never handled twice in one epoch of its queue
 *   (protocol/epoch.ts). The cursor goes with its epoch; a poll that shows another one
 *   (the queue started again: Redis restarted empty, the channel was made anew) means
 *   the seqs begin again, so the channel forgets its own and hands over every message
 *   from the queue's new start.
 * - Every poll names this channel's reader, a token minted when it is made (once per
 *   page load), so that another reader of the same channel (the in-chat reader and its
 *   browser tab, an app open on two screens) keeps every message too: the server deletes
 *   a message only once every reader it saw lately acknowledged it (store/readers.ts). A
 *   reader away longer than that is told it missed messages: {@link AppChannel.onmissed}.
 * - Polls wait on the server (`wait_ms`), so news arrives as soon as it is written. The
 *   first poll does not wait: it delivers what is queued at once and times one round trip.
 * - A send never waits behind a poll, and never costs a connection. Hosts differ: most
 *   run an app's calls side by side, some one at a time. Cancelling a poll is not free
 *   either: a host may hold the browser's request for a cancelled call open for a
 *   minute, and a browser allows six connections per origin. So the channel learns the
 *   host from what it observes ({@link HostCalls}):
 *   - a send that completes while a poll started before it is still pending proves
 *     side-by-side calls: the channel never cancels a poll for a send again;
 *   - otherwise, a send still running after about a second (`cancelAfterMs`, or three
 *     round trips on a slow host) with a poll pending cancels that poll;
 *   - a send still running long after that cancel (`serialisedAfterMs`) means the host
 *     runs calls one at a time and ignores cancels: the channel falls back to short
 *     polls (`wait_ms: 0` every few seconds) for good.
 * - Errors back off exponentially with jitter and recover by themselves when the host
 *   or the server comes back.
 * - Every poll result also carries the wall of the channel's session (the agent's
 *   status for every reader, not queued); {@link AppChannel.onwall} hears when it changes.
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import { isEpoch } from "../protocol/epoch.js";
import type { QueueMessage } from "../protocol/message.js";
import { toolErrorCode } from "../protocol/tool-error.js";
import type { Wall } from "../protocol/wall.js";

/** A message of a channel queue, as polls return it (the one message shape, protocol/message.ts). */
export type ChannelMessage = QueueMessage;

/** The agent's status for every app of its session, shown until `until` (protocol/wall.ts). */
export type ChannelWall = Wall;

/** `connecting` until the first poll answers, `live` while polls succeed, `retrying` after a failure, `stopped` after {@link AppChannel.stop}. */
export type ChannelState = "connecting" | "live" | "retrying" | "stopped";

/**
 * What the channel has learnt about how the host runs the app's calls: `unknown` until
 * a send proves otherwise (a slow send cancels the pending poll), `side-by-side` once a
 * send completed while an older poll was still pending (no poll is cancelled for a send
 * again), `one-at-a-time` once a send stayed stuck even after its poll was cancelled
 * (polls are short from then on).
 */
export type HostCalls = "unknown" | "side-by-side" | "one-at-a-time";

/** Options of {@link AppChannel}. */
export interface AppChannelOptions {
  /** The channel to use. */
  channelId: string;
  /** How long one poll waits on the server for news. Default 25,000 ms (the server allows up to 30,000). */
  waitMs?: number;
  /** Pause between polls once the host is found to run calls one at a time. Default 2,000 ms. */
  shortPollMs?: number;
  /**
   * A send not completed this long, with a poll pending, cancels the poll (until the host
   * is known to run calls side by side). At least three round trips of the first poll.
   * Default 1,000 ms.
   */
  cancelAfterMs?: number;
  /**
   * A send still not completed this long after its poll was cancelled means the host runs
   * calls one at a time and ignores cancels: polls become short. At least three round
   * trips of the first poll. Default 2,000 ms.
   */
  serialisedAfterMs?: number;
  /** First pause after a failed poll; it doubles up to `maxBackoffMs`. Default 500 ms. */
  minBackoffMs?: number;
  /** Longest pause after failed polls. Default 15,000 ms. */
  maxBackoffMs?: number;
}

/**
 * A tool call of the channel failed; `message` is the server's or host's explanation,
 * `code` the server's stable error code (e.g. `QUEUE_FULL`, docs/ARCHITECTURE.md,
 * "Errors") when it gave one: branch on the code, never on the message.
 */
export class ChannelError extends Error {
  override readonly name = "ChannelError";
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

type Handler = (data: unknown, message: ChannelMessage) => void;

/** The longest a send waits for its poll before cancelling it, however slow the host's round trip. */
const MAX_PATIENCE_MS = 5_000;

/** A poll in flight: what cancels it, when it left, and whether it waits on the server. */
interface PendingPoll {
  controller: AbortController;
  startedAt: number;
  waits: boolean;
}

/** One channel, seen from the app. Create it after `app.connect()`, register handlers with {@link on}, then {@link start}. */
export class AppChannel {
  /** Called whenever {@link state} changes, with the error that caused a `retrying`. */
  onstatechange?: (state: ChannelState, error?: Error) => void;
  /** Called when a poll shows a wall other than the last one (posted, replaced, cleared or expired: `null`). */
  onwall?: (wall: ChannelWall | null) => void;
  /** Called when {@link hostCalls} changes (it changes at most once, from `unknown`). */
  onhostcalls?: (calls: HostCalls) => void;
  /**
   * Called when a poll says messages were deleted before this channel read them (it was
   * not polling for minutes while another reader of the channel acknowledged them): the
   * app should reload what it shows from its state. The messages still queued are
   * handed over as usual.
   */
  onmissed?: () => void;
  /** Who reads: minted once, kept by every poll of this channel (see the module's comment). */
  readonly reader = mintReaderId();

  private readonly channelId: string;
  private readonly waitMs: number;
  private readonly shortPollMs: number;
  private readonly cancelAfterMs: number;
  private readonly serialisedAfterMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly sends = new Set<Promise<unknown>>();
  private currentState: ChannelState = "connecting";
  private calls: HostCalls = "unknown";
  private running = false;
  /** The highest seq handed to the handlers. */
  private lastSeq = 0;
  /** The epoch of the queue `lastSeq` belongs to; `undefined` until a poll tells it. */
  private epoch: string | undefined;
  private lastWall: string | undefined;
  /** How long the first poll (which does not wait) took: the host's round trip. */
  private roundTripMs = 0;
  private polls = 0;
  private cancels = 0;
  private poll?: PendingPoll;
  private wake?: () => void;

  constructor(
    private readonly app: App,
    options: AppChannelOptions,
  ) {
    this.channelId = options.channelId;
    this.waitMs = options.waitMs ?? 25_000;
    this.shortPollMs = options.shortPollMs ?? 2_000;
    this.cancelAfterMs = options.cancelAfterMs ?? 1_000;
    this.serialisedAfterMs = options.serialisedAfterMs ?? 2_000;
    this.minBackoffMs = options.minBackoffMs ?? 500;
    this.maxBackoffMs = options.maxBackoffMs ?? 15_000;
  }

  /** The state of the receiving loop. */
  get state(): ChannelState {
    return this.currentState;
  }

  /** How the host runs the app's calls, as far as the channel has seen. */
  get hostCalls(): HostCalls {
    return this.calls;
  }

  /** True once the channel has fallen back to short polls (the host runs calls one at a time and ignores cancels). */
  get shortPolling(): boolean {
    return this.calls === "one-at-a-time";
  }

  /** How many polls the channel has cancelled to let a send through (not counting {@link stop}). */
  get cancelledPolls(): number {
    return this.cancels;
  }

  /** Calls `handler` for every message with this `event` (`"*"`: every message). Returns a function that removes it. */
  on(event: string, handler: Handler): () => void {
    const set = this.handlers.get(event) ?? new Set<Handler>();
    set.add(handler);
    this.handlers.set(event, set);
    return () => set.delete(handler);
  }

  /** Starts receiving. Does nothing when already started. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.run();
  }

  /** Stops receiving and cancels the pending poll. Sends still work. */
  stop(): void {
    this.running = false;
    this.poll?.controller.abort();
    this.wake?.();
    this.setState("stopped");
  }

  /**
   * Sends `event` with `data` (default `{}`) to the agent. It never waits behind a poll:
   * see the module's comment for when the pending poll is cancelled.
   * @returns the message's seq in the agent's queue.
   * @throws ChannelError with the server's message when the call fails or is refused.
   */
  async send(event: string, data: unknown = {}): Promise<number> {
    const startedAt = performance.now();
    // Only a poll that left before this send tells anything: a host that runs calls
    // one at a time answers it first.
    const poll = this.calls === "unknown" ? this.poll : undefined;
    const call = this.app.callServerTool({ name: "notify_agent", arguments: { channel_id: this.channelId, event, data } });
    this.sends.add(call);
    let cancelledAt: number | undefined;
    // Only a poll that waits is worth cancelling: one that does not answers soon anyway.
    const timer = poll?.waits
      ? setTimeout(() => {
          if (this.poll !== poll || this.calls !== "unknown") return;
          cancelledAt = performance.now();
          this.cancels += 1;
          poll.controller.abort();
        }, this.patience(this.cancelAfterMs))
      : undefined;
    let result: Awaited<typeof call>;
    let completed = false;
    try {
      result = await call;
      completed = true;
    } catch (error) {
      throw new ChannelError(`could not send ${event}: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
      this.sends.delete(call);
      if (poll) this.learn(poll, startedAt, completed, cancelledAt);
      this.wake?.();
    }
    if (result.isError) throw new ChannelError(textOf(result.content) || `the server refused ${event}`, toolErrorCode(result.structuredContent));
    const seq = (result.structuredContent as { seq?: unknown } | undefined)?.seq;
    return typeof seq === "number" ? seq : 0;
  }

  /**
   * What a send that left while `poll` was pending tells about the host (see
   * {@link HostCalls}). Only an answered send proves side-by-side calls: a failure may
   * never have left the app.
   */
  private learn(poll: PendingPoll, sendStartedAt: number, completed: boolean, cancelledAt: number | undefined): void {
    if (this.calls !== "unknown") return;
    const pollStillPending = this.poll === poll && !poll.controller.signal.aborted;
    if (completed && pollStillPending && poll.startedAt <= sendStartedAt) this.setHostCalls("side-by-side");
    else if (cancelledAt !== undefined && performance.now() - cancelledAt > this.patience(this.serialisedAfterMs)) this.setHostCalls("one-at-a-time");
  }

  /**
   * `ms`, or three of the host's round trips when that is longer: on a slow host a send
   * may take a second and still run beside the poll. Capped at {@link MAX_PATIENCE_MS},
   * so that one slow first call cannot make a serialising host's sends wait long.
   */
  private patience(ms: number): number {
    return Math.max(ms, Math.min(MAX_PATIENCE_MS, 3 * this.roundTripMs));
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      // A send in flight goes first; polling again now would queue behind it on a serialising host.
      while (this.sends.size > 0) await Promise.allSettled([...this.sends]);
      if (!this.running) break;
      // The first poll does not wait: it delivers what is queued at once and times the host's round trip.
      const waitMs = this.polls === 0 || this.calls === "one-at-a-time" ? 0 : this.waitMs;
      const poll: PendingPoll = { controller: new AbortController(), startedAt: performance.now(), waits: waitMs > 0 };
      this.poll = poll;
      try {
        const since = this.epoch === undefined ? {} : { epoch: this.epoch };
        const result = await this.app.callServerTool(
          {
            name: "poll_ui_messages",
            arguments: { channel_id: this.channelId, after: this.lastSeq, ...since, reader: this.reader, wait_ms: waitMs },
          },
          { signal: poll.controller.signal, timeout: waitMs + 15_000 },
        );
        if (this.polls === 0) this.roundTripMs = performance.now() - poll.startedAt;
        this.polls += 1;
        // Stopped while the poll was on its way back: deliver nothing more (the messages stay unacknowledged).
        if (!this.running) break;
        if (result.isError) throw new ChannelError(textOf(result.content) || "poll_ui_messages failed", toolErrorCode(result.structuredContent));
        const messages = parseMessages(result.structuredContent);
        this.enterEpoch(parseEpoch(result.structuredContent));
        failures = 0;
        this.setState("live");
        this.showWall(parseWall(result.structuredContent));
        if ((result.structuredContent as { missed?: unknown } | undefined)?.missed === true) this.onmissed?.();
        for (const message of messages) this.deliver(message);
        if (this.calls === "one-at-a-time" && messages.length === 0) await this.pause(this.shortPollMs);
      } catch (error) {
        if (poll.controller.signal.aborted) continue;
        failures += 1;
        this.setState("retrying", error as Error);
        const backoff = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** (failures - 1));
        await this.pause(backoff / 2 + Math.random() * (backoff / 2));
      } finally {
        if (this.poll === poll) this.poll = undefined;
      }
    }
  }

  /**
   * Takes `epoch` as the queue's: another one than the last poll's means the queue
   * started again, and every seq in it is new. An older server gives none (`undefined`):
   * seqs are then taken as they are.
   */
  private enterEpoch(epoch: string | undefined): void {
    if (epoch === undefined) return;
    if (this.epoch !== undefined && epoch !== this.epoch) this.lastSeq = 0;
    this.epoch = epoch;
  }

  /** Hands `message` to its handlers unless its seq was handled already. */
  private deliver(message: ChannelMessage): void {
    if (message.seq <= this.lastSeq) return;
    this.lastSeq = message.seq;
    for (const handler of [...(this.handlers.get(message.event) ?? []), ...(this.handlers.get("*") ?? [])]) {
      try {
        handler(message.data, message);
      } catch (error) {
        console.error(`backchannel: a handler of ${message.event} failed`, error);
      }
    }
  }

  private showWall(wall: ChannelWall | null): void {
    const key = wall ? `${wall.text}\n${wall.until}` : "";
    if (key === this.lastWall) return;
    this.lastWall = key;
    this.onwall?.(wall);
  }

  /** Waits `ms`, or less when a send ends or the channel stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  private setState(state: ChannelState, error?: Error): void {
    if (state === this.currentState && state !== "retrying") return;
    this.currentState = state;
    this.onstatechange?.(state, error);
  }

  private setHostCalls(calls: HostCalls): void {
    this.calls = calls;
    this.onhostcalls?.(calls);
  }
}

/** A reader id (READER_ID_PATTERN, core/ids.ts): 24 random hex digits. */
function mintReaderId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The messages of a poll result; anything malformed is dropped rather than trusted. */
function parseMessages(structured: unknown): ChannelMessage[] {
  const messages = (structured as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) throw new ChannelError("poll_ui_messages returned no messages array");
  return messages.filter(
    (message): message is ChannelMessage =>
      typeof message === "object" &&
      message !== null &&
      Number.isSafeInteger((message as ChannelMessage).seq) &&
      typeof (message as ChannelMessage).event === "string",
  );
}

/** The epoch of a poll result, or `undefined` when it has none (an older server) or it is malformed. */
function parseEpoch(structured: unknown): string | undefined {
  const epoch = (structured as { epoch?: unknown } | undefined)?.epoch;
  return isEpoch(epoch) ? epoch : undefined;
}

/** The wall of a poll result, or `null` when there is none or it is malformed. */
function parseWall(structured: unknown): ChannelWall | null {
  const wall = (structured as { wall?: Partial<ChannelWall> | null } | undefined)?.wall;
  if (!wall || typeof wall.text !== "string" || typeof wall.until !== "string") return null;
  return { text: wall.text, until: wall.until, posted_at: typeof wall.posted_at === "string" ? wall.posted_at : "" };
}

/** The text blocks of a tool result, joined. */
export function textOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((block) =>
      block && typeof block === "object" && (block as { type?: unknown }).type === "text" ? String((block as { text: unknown }).text) : "",
    )
    .join("\n")
    .trim();
}
