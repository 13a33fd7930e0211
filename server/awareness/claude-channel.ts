/**
 * Claude Code channels (research preview): a stdio server that declares the
 * experimental capability `claude/channel` may send `notifications/claude/channel`, and
 * an idle Claude Code session starts a turn on it. backchannel pushes each message that
 * rings (every event but the app's own `ready`) on the channels this process opened or
 * polled, as `{content, meta: {channel_id, event, seq}}`.
 *
 * Several server processes may watch one channel (Claude Code runs several; each
 * session of a host may run its own). Exactly one push per message, across all of
 * them, is kept by the channel's `claude-push` state document, changed only under its
 * lock:
 * - `owner_pid`: the process that pushes. The last process to open the channel with
 *   `open_reader` takes it; any watcher takes it when its owner no longer runs;
 * - `pushed_seq`: the highest seq pushed. A message is pushed only by the process that
 *   raises `pushed_seq` past it, so no message is pushed twice, even while ownership
 *   changes hands.
 * A push is a doorbell: unacknowledged, and dropped by a session that did not opt in.
 * The agent still reads the queue with `poll_agent_messages`.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { ASK_EVENT, ringsDoorbell } from "../../core/events.js";
import { PUSH_PASSAGE_CHARS, PUSH_QUESTION_CHARS } from "../../core/limits.js";
import { oneLine } from "../../core/text.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import type { ChannelStore } from "../../store/store.js";
import type { AgentInbox } from "./agent-inbox.js";
import { type Warn, warnOnStderr } from "../../core/warn.js";

/** The experimental capability a server declares to send channel notifications. */
export const CLAUDE_CHANNEL_CAPABILITY = "claude/channel";
/** The notification method of a channel push. */
export const CLAUDE_CHANNEL_METHOD = "notifications/claude/channel";
/** The state document that records a channel's push owner and its high-water mark. */
export const PUSH_STATE = "claude-push";

type PushState = { owner_pid: number; pushed_seq: number };

/** Pushes the messages of `inbox` to the client of `server`, one push per message across processes. */
export class ClaudeChannelPusher {
  private readonly stopListening: () => void;
  /** Pushes run one at a time per process, in the order the inbox saw the changes. */
  private queue: Promise<void> = Promise.resolve();

  /**
   * @param pid this process, as recorded in `owner_pid`. Default `process.pid`.
   * @param warn where a failed push is reported. Default: one line on stderr.
   */
  constructor(
    private readonly server: McpServer,
    private readonly store: ChannelStore,
    inbox: AgentInbox,
    private readonly pid: number = process.pid,
    private readonly warn: Warn = warnOnStderr,
  ) {
    this.stopListening = inbox.onChange((channelId, messages) => {
      this.queue = this.queue
        .then(() => this.push(channelId, messages))
        .catch((error: Error) => this.warn(`channel push on ${channelId} failed: ${error.message}`));
    });
  }

  /**
   * Makes this process the channel's push owner (what `open_reader` does). Messages
   * already pushed stay pushed.
   * @throws LockTimeoutError, I/O errors.
   */
  async claim(channelId: string): Promise<void> {
    await this.store.updateState(channelId, PUSH_STATE, (current) => ({ ...parsePushState(current), owner_pid: this.pid }));
  }

  /** Stops following the inbox. */
  close(): void {
    this.stopListening();
  }

  private async push(channelId: string, messages: readonly QueueMessage[]): Promise<void> {
    const ringing = messages.filter((message) => ringsDoorbell(message.event));
    if (ringing.length === 0) return;
    const seen = parsePushState(await this.store.readState(channelId, PUSH_STATE));
    // Cheap check without the lock: most wake-ups in a process that does not own the channel end here.
    if (!this.mayPush(seen) || ringing.every((message) => message.seq <= seen.pushed_seq)) return;
    let fresh: QueueMessage[] = [];
    await this.store.updateState(channelId, PUSH_STATE, (current) => {
      const state = parsePushState(current);
      if (!this.mayPush(state)) return state;
      fresh = ringing.filter((message) => message.seq > state.pushed_seq);
      return { owner_pid: this.pid, pushed_seq: Math.max(state.pushed_seq, ...ringing.map((message) => message.seq)) };
    });
    for (const message of fresh) {
      await this.server.server.notification({
        method: CLAUDE_CHANNEL_METHOD,
        params: { content: pushText(channelId, message), meta: { channel_id: channelId, event: message.event, seq: String(message.seq) } },
      });
    }
  }

  /** Whether this process may push: it owns the channel, or nobody live does. */
  private mayPush(state: PushState): boolean {
    return state.owner_pid === this.pid || !isRunning(state.owner_pid);
  }
}

/** The text Claude sees: what arrived, and the pull that must follow. */
function pushText(channelId: string, message: QueueMessage): string {
  const data = message.data as { question?: JsonValue; quote?: JsonValue } | null;
  const poll = `Call poll_agent_messages {"channel_id":"${channelId}"} to read it`;
  if (message.event === ASK_EVENT && typeof data?.question === "string") {
    const about = typeof data.quote === "string" ? ` about ${JSON.stringify(oneLine(data.quote, PUSH_PASSAGE_CHARS))}` : "";
    return `The reader asks${about}: ${JSON.stringify(oneLine(data.question, PUSH_QUESTION_CHARS))}. ${poll}, then answer with notify_ui.`;
  }
  return `The app sent ${message.event} (seq ${message.seq}) on channel ${channelId}. ${poll}.`;
}

/** The push state in `value`; anything else (no document yet, a damaged one) reads as unowned and nothing pushed. */
function parsePushState(value: JsonValue | null): PushState {
  const state = value as Partial<PushState> | null;
  const owner = Number.isSafeInteger(state?.owner_pid) ? state!.owner_pid! : 0;
  const pushed = Number.isSafeInteger(state?.pushed_seq) ? state!.pushed_seq! : 0;
  return { owner_pid: owner, pushed_seq: pushed };
}

/** Whether process `pid` runs on this machine (a process of another user counts). */
function isRunning(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
