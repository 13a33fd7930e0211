/**
 * The session watcher: waits for mail on any channel of one host session (the session
 * key of core/session-key.ts; the session record lists its channels, channels opened
 * meanwhile included), and tells what waits in one summary that carries the asks
 * themselves, so that the agent can answer at once (docs/ARCHITECTURE.md, "Waking the
 * agent"). Like the channel watcher it only peeks: it never locks, drains or writes the
 * store. What it writes is its claim (./session-claim.ts), outside the store.
 *
 * It ends quietly when a newer watcher of the session takes the claim, when the host
 * process is gone, or when `signal` aborts.
 */
import { isChannelId } from "../core/ids.js";
import { CallerError } from "../core/errors.js";
import { ringsDoorbell } from "../core/events.js";
import { afterSeqIn, NO_EPOCH } from "../protocol/epoch.js";
import type { SessionChannel } from "../store/session-record.js";
import type { ChangeSubscription, ChannelReader, QueueSnapshot } from "../store/store.js";
import type { Announced, SessionClaim } from "./session-claim.js";
import { describeMail, type ChannelMail } from "./session-summary.js";

/** Options of {@link watchSession}. */
export interface SessionWatchOptions {
  /** The store, read-only. */
  reader: ChannelReader;
  /** The session key whose channels are watched. */
  key: string;
  /** This watcher's claim on the session. */
  claim: SessionClaim;
  /** Give up after this long. */
  timeoutMs: number;
  /** The host's process: the watch ends when it is gone. Default: none checked. */
  hostPid?: number;
  /** Ends the watch. */
  signal?: AbortSignal;
  /** Re-read (and check the claim and the host) this often without a change event. Default: the store's. */
  fallbackMs?: number;
  /** Where notes go (a channel that cannot be read). */
  err: (line: string) => void;
  /**
   * End at once (`ended`) when the session has no channel on the first look: a host whose
   * hook holds the turn while it waits (Gemini CLI) must not hold a session that has
   * nothing to wait for. Default false.
   */
  onlyWithChannels?: boolean;
  /**
   * Asked just before the watcher announces a wake: a reason the wake would reach no one
   * (the host went on without this watcher, as Gemini CLI does with a hook whose turn was
   * cancelled), or `undefined`. With a reason the watch ends (`ended`) without announcing,
   * so that the host's next watcher wakes the agent for the same messages. Default: none.
   */
  stillWanted?: () => string | undefined;
}

/** How a session watch ended. */
export type SessionWatchOutcome =
  /** A message waits that the agent was not woken for yet: `summary` says what waits. */
  | { kind: "mail"; summary: string }
  | { kind: "timeout" }
  /** Superseded, host gone or stopped: `reason` says which. */
  | { kind: "ended"; reason: string };

/**
 * Watches the session until a message waits that the agent has not been woken for
 * (a ringing event, see core/events.ts, with a seq above the claim's mark), the timeout
 * passes, or the watch ends. Takes the claim first and gives it up at the end.
 * @throws I/O errors of the claim, errors of the store other than a channel's own
 *   (CallerError: a corrupt queue, a store away), which are noted and skipped.
 */
export async function watchSession(options: SessionWatchOptions): Promise<SessionWatchOutcome> {
  const { reader, key, claim, timeoutMs, hostPid, signal, err } = options;
  const fallbackMs = options.fallbackMs ?? reader.fallbackWakeMs;
  const announced = await claim.take();
  const deadline = Date.now() + timeoutMs;
  const watches = new Map<string, ChangeSubscription>();
  const sessionWatch = reader.sessions.watch(key);
  const noted = new Set<string>();
  let firstLook = true;
  try {
    for (;;) {
      const ended = endReason(claim, hostPid, signal);
      if (ended) return { kind: "ended", reason: ended };
      const record = await reader.sessions.read(key);
      const channels = record.channels.filter((channel) => isChannelId(channel.id));
      if (options.onlyWithChannels && channels.length === 0 && firstLook) return { kind: "ended", reason: "no channel is open in this session" };
      firstLook = false;
      // Subscribed before the peek, so that a message landing between the two still wakes.
      for (const channel of channels) if (!watches.has(channel.id)) watches.set(channel.id, reader.watchQueue(channel.id, "agent"));
      const mail: ChannelMail[] = [];
      for (const channel of channels) {
        const { messages, epoch } = await ringing(reader, channel, noted, err);
        if (messages.length > 0) mail.push({ channel, messages, epoch });
      }
      // A mark of another epoch says nothing of the queue now (it started again): its every message is news.
      const isNews = (box: ChannelMail) =>
        box.messages.at(-1)!.seq > afterSeqIn(box.epoch, announced[box.channel.id] ?? { seq: 0, epoch: undefined });
      if (mail.some(isNews)) {
        const unwanted = options.stillWanted?.();
        if (unwanted !== undefined) return { kind: "ended", reason: unwanted };
        const marks: Announced = Object.fromEntries(mail.map((box) => [box.channel.id, { seq: box.messages.at(-1)!.seq, epoch: box.epoch }]));
        // Announced and released at once: the watch ends here.
        if (!(await claim.announce(marks))) return { kind: "ended", reason: "a newer watcher of this session took over" };
        return { kind: "mail", summary: describeMail(mail) };
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { kind: "timeout" };
      await anyChange([sessionWatch, ...watches.values()], Math.min(remaining, fallbackMs), signal);
    }
  } finally {
    await claim.release();
    sessionWatch.close();
    for (const watch of watches.values()) watch.close();
  }
}

/** Why the watch must end now, or `undefined`. */
function endReason(claim: SessionClaim, hostPid: number | undefined, signal: AbortSignal | undefined): string | undefined {
  // A newer watcher ends this one with SIGTERM (the signal): say why, when that is why.
  if (!claim.holds()) return "a newer watcher of this session took over";
  if (signal?.aborted) return "stopped by a signal";
  if (hostPid !== undefined && !isAlive(hostPid)) return `the host process ${hostPid} is gone`;
  return undefined;
}

/** The ringing messages waiting for the agent on `channel`, and its queue's epoch; none (noted once) when its queue cannot be read. */
async function ringing(reader: ChannelReader, channel: SessionChannel, noted: Set<string>, err: (line: string) => void): Promise<QueueSnapshot> {
  try {
    const { messages, epoch } = await reader.snapshot(channel.id, "agent");
    noted.delete(channel.id);
    return { messages: messages.filter((message) => ringsDoorbell(message.event, channel.app)), epoch };
  } catch (error) {
    // A corrupt queue is the server's to repair at its next write, a store away comes back
    // by itself: neither is mail, nor a reason to stop watching the other channels.
    if (!(error instanceof CallerError)) throw error;
    if (!noted.has(channel.id)) err(`cannot read the agent queue of ${channel.id} (${error.message}); still watching`);
    noted.add(channel.id);
    return { messages: [], epoch: NO_EPOCH };
  }
}

/** Waits until any of `watches` reports a change, `maxMs` passes, or `signal` aborts. */
async function anyChange(watches: ChangeSubscription[], maxMs: number, signal: AbortSignal | undefined): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race(watches.map((watch) => watch.next(maxMs, stop.signal)));
  } finally {
    stop.abort();
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Whether process `pid` runs (one this user may signal or not). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
