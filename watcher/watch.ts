/**
 * The watcher: `backchannel watch <channel_id>` waits for the agent queue of a channel to
 * hold a message. It reads the store through its read-only view and only peeks: it
 * never locks, drains or writes, so it cannot disturb the server, and it never loads
 * the MCP SDK, so it starts fast.
 *
 * - exit mode: exits 0 and prints one summary line as soon as a message waits;
 * - follow mode (`--follow`): prints one line per newly arrived message, never the
 *   same seq twice, and coalesces a burst into one line (Claude Code's Monitor turns
 *   each line into a notification and stops monitors that flood);
 * - both exit 2 when the timeout passes, 1 on a bad channel id or an unreadable data
 *   directory;
 * - with `--notify`, a desktop notification tells the person too (./notify.ts).
 */
import { watchCommand } from "../core/commands.js";
import { callerErrorCode } from "../core/errors.js";
import { CHANNEL_ID_RULE, isChannelId } from "../core/ids.js";
import { WAKE_QUOTE_CHARS, WATCH_PREVIEW_CHARS } from "../core/limits.js";
import { oneLine } from "../core/text.js";
import type { QueueMessage } from "../protocol/message.js";
import { changes } from "../store/changes.js";
import { channelTitle } from "../store/channel-title.js";
import type { ChannelReader, QueueSnapshot } from "../store/store.js";
import { afterSeqIn, type SeqMark } from "../protocol/epoch.js";
import { desktopNotifier } from "./notify.js";

/** Exit codes of the watcher. */
export const WATCH_EXIT = { message: 0, error: 1, timeout: 2 } as const;

/** What a watcher does and where it writes, the same for the local and the remote watcher (cli/watch-remote.ts). */
export interface WatchBehaviour {
  /** Give up after this long. Default 1,800,000 (30 minutes). */
  timeoutMs?: number;
  /** Print a line per message and keep going, instead of exiting at the first. Default false. */
  follow?: boolean;
  /** Also show a desktop notification when messages arrive. Default false. */
  notify?: boolean;
  /** Where lines for the agent go. Default: stdout. */
  out?: (line: string) => void;
  /** Where errors and notes go. Default: stderr, each line made safe for a terminal (`oneLine`). */
  err?: (line: string) => void;
  /** The words naming the store that the re-arm command printed at the timeout carries (see `watchCommand`). Default none. */
  where?: readonly string[];
}

/** Options of {@link watchChannel}. */
export interface WatchOptions extends WatchBehaviour {
  /** The channel to watch; checked before anything is read. */
  channelId: string;
  /** The store, read-only (the server's). */
  reader: ChannelReader;
  /**
   * Re-read this often when no change event came. Default: the store's own
   * (`reader.fallbackWakeMs`: 5 s over files, 30 s over Redis). Events wake the watcher
   * at once; the timer only serves those a store can miss, and each wake-up costs idle CPU.
   */
  fallbackMs?: number;
}

/** In follow mode, more new messages than this at once are told in one line. */
const BURST_LINES = 5;

/**
 * Watches the agent queue of a channel.
 * @returns the exit code: 0 when a message waits (exit mode), 2 on timeout, 1 on error.
 *   Never throws.
 */
export async function watchChannel(options: WatchOptions): Promise<number> {
  // Lines for the agent hold checked channel ids and event names, and previews made safe
  // by oneLine; they are written as they are, so that a re-arm command keeps every byte.
  // Errors quote the command line and the data directory's files: the terminal gets none of their escapes.
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`backchannel watch: ${oneLine(line)}\n`));
  const { channelId, reader, follow = false, notify = false, timeoutMs = 1_800_000, fallbackMs = reader.fallbackWakeMs } = options;
  if (!isChannelId(channelId)) {
    err(invalidChannelMessage(channelId));
    return WATCH_EXIT.error;
  }
  const notifier = notify ? desktopNotifier(err) : undefined;
  // The last seq told of, in its queue's epoch: a queue that starts again is told from its start.
  let told: SeqMark = { seq: 0, epoch: undefined };
  let lastProblem = "";
  try {
    for await (const wake of changes(reader.watchQueue(channelId, "agent"), { fallbackMs, deadline: Date.now() + timeoutMs })) {
      let snapshot: QueueSnapshot | undefined;
      try {
        snapshot = await reader.snapshot(channelId, "agent");
        lastProblem = "";
      } catch (error) {
        // A queue that cannot be read as one (corrupt, or something else in its place) is
        // the server's to repair at its next write; a store that cannot be reached (Redis
        // away) comes back by itself. Say so once, and keep watching.
        const code = callerErrorCode(error);
        if (code === undefined) throw error;
        const problem = (error as Error).message;
        const next = code === "CORRUPT_QUEUE_FILE" ? "the server will repair it at its next write" : "still watching";
        if (problem !== lastProblem) err(`${problem}; ${next}`);
        lastProblem = problem;
      }
      const fresh = snapshot ? snapshot.messages.filter((message) => message.seq > afterSeqIn(snapshot.epoch, told)) : [];
      if (snapshot && fresh.length > 0) {
        const lines = follow ? followLines(channelId, fresh) : [summaryLine(channelId, fresh)];
        for (const line of lines) out(line);
        if (notifier) await notifier.notify("backchannel", notificationBody(fresh));
        if (!follow) return WATCH_EXIT.message;
        told = { seq: fresh.at(-1)!.seq, epoch: snapshot.epoch };
      }
      // On stderr, so that the agent's stdout stays one line per event.
      if (wake === "start") {
        // A mistyped id, or a store other than the server's, would otherwise cost the whole timeout in silence.
        if (fresh.length === 0 && !(await reader.hasChannel(channelId).catch(() => true))) err(unknownChannelMessage(channelId));
        err(`waiting for messages on ${channelId} (timeout ${timeoutMs / 1000} s)`);
      }
    }
  } catch (error) {
    err(`cannot read the agent queue of ${channelId}: ${(error as Error).message}`);
    return WATCH_EXIT.error;
  }
  // Read once, at the timeout, so that the agent can tell which of its channels the line is of.
  const title = await channelTitle(reader, channelId);
  out(timeoutLine(channelId, timeoutMs, watchCommand(channelId, { follow, where: options.where }), title));
  return WATCH_EXIT.timeout;
}

/** What a watcher says of a channel id that is not one. */
export function invalidChannelMessage(channelId: string): string {
  return `invalid channel id ${JSON.stringify(channelId)}: use the channel_id that open_reader or open_app returned (${CHANNEL_ID_RULE})`;
}

/** What a watcher says when no channel of that id exists in its store (yet). */
export function unknownChannelMessage(channelId: string): string {
  return (
    `no channel ${channelId} exists in this store yet: check the id (the channel_id open_reader or open_app returned), ` +
    "and that BACKCHANNEL_HOME or BACKCHANNEL_STORE is the server's; waiting in case an app opens it"
  );
}

/**
 * The line a watcher prints when its timeout passes: how long it watched, the channel's
 * title when it has one (made one safe line, cut to {@link WAKE_QUOTE_CHARS}), and the
 * command that arms it again.
 */
export function timeoutLine(channelId: string, timeoutMs: number, rearm: string, title?: string): string {
  const named = title === undefined ? "" : ` ("${oneLine(title, WAKE_QUOTE_CHARS)}")`;
  return `No message on ${channelId}${named} after ${timeoutMs / 1000} s. Re-arm: ${rearm}`;
}

/** The one summary line: how many messages of which events wait, and what to do (exit mode, or a burst in follow mode). */
export function summaryLine(channelId: string, messages: QueueMessage[], follow = false): string {
  const counts = new Map<string, number>();
  for (const message of messages) counts.set(message.event, (counts.get(message.event) ?? 0) + 1);
  const events = [...counts].map(([event, count]) => (count > 1 ? `${event} x${count}` : event)).join(", ");
  const noun = messages.length === 1 ? "message" : "messages";
  // A following watcher is still running: telling the agent to re-arm would start a second one.
  const next = follow ? "" : ", then re-arm the watcher";
  return `${messages.length} ${noun} waiting on ${channelId} (${events}). Read with poll_agent_messages {"channel_id":"${channelId}"}${next}.`;
}

/** Follow mode's lines: one per message, or one summary for a burst. */
export function followLines(channelId: string, messages: QueueMessage[]): string[] {
  if (messages.length > BURST_LINES) return [summaryLine(channelId, messages, true)];
  return messages.map((message) => `${channelId} #${message.seq} ${message.event}: ${preview(message.data)}`);
}

/** A notification's text: the first message's preview, and how many more there are. */
export function notificationBody(messages: QueueMessage[]): string {
  const first = `${messages[0]!.event}: ${preview(messages[0]!.data)}`;
  return messages.length === 1 ? first : `${first} (+${messages.length - 1} more)`;
}

/** A one-line preview of message data: its question or text when it has one, else its JSON; cut to {@link WATCH_PREVIEW_CHARS}. */
function preview(data: unknown): string {
  const record = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
  const chosen = [record.question, record.text].find((value) => typeof value === "string") ?? JSON.stringify(data);
  return oneLine(String(chosen), WATCH_PREVIEW_CHARS);
}
