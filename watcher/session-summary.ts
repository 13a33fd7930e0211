/**
 * What the session watcher tells the agent: each channel with mail (by its title), the
 * messages themselves, and the one call that answers an ask and clears it, so that a
 * wake costs the model one tool call and the end of its turn.
 *
 * Everything in it comes from outside (the app wrote the messages, the model the
 * titles): each piece goes through `oneLine` (no escapes, no control characters, no
 * newlines of its own) and is cut to its limit, and the whole stays within
 * {@link WAKE_SUMMARY_CHARS}; what does not fit is counted and left for a poll.
 */
import { ASK_EVENT } from "../core/events.js";
import { WAKE_MESSAGE_CHARS, WAKE_QUOTE_CHARS, WAKE_SUMMARY_CHARS } from "../core/limits.js";
import { characterCount, oneLine } from "../core/text.js";
import { NO_EPOCH } from "../protocol/epoch.js";
import type { QueueMessage } from "../protocol/message.js";
import type { SessionChannel } from "../store/session-record.js";

/** The ringing messages waiting on one channel of the session, oldest first (never empty), and the epoch of their queue. */
export interface ChannelMail {
  channel: SessionChannel;
  messages: QueueMessage[];
  epoch: string;
}

/**
 * The summary of `mail`: a first line with the count, then per channel a heading, one
 * line per message and the calls that answer (`notify_ui` with `ack`, the last seq
 * shown, which clears what was handled) or read the rest (`poll_agent_messages`).
 */
export function describeMail(mail: ChannelMail[]): string {
  const total = mail.reduce((sum, box) => sum + box.messages.length, 0);
  const lines = [
    `backchannel: ${total} message${total === 1 ? "" : "s"} from the app${total === 1 ? "" : "s"} in this chat. Answer now; backchannel wakes you again for the next (arm no watcher).`,
  ];
  let used = characterCount(lines[0]!);
  for (const { channel, messages, epoch } of mail) {
    const shown: string[] = [];
    let lastShown = 0;
    for (const message of messages) {
      const line = `- #${message.seq} ${describeMessage(message)}`;
      if (used + characterCount(line) > WAKE_SUMMARY_CHARS - 600) break;
      shown.push(line);
      used += characterCount(line);
      lastShown = message.seq;
    }
    const title = channel.title === undefined ? "" : ` "${oneLine(channel.title, WAKE_QUOTE_CHARS)}"`;
    const app = channel.app === "reader" ? "Reader" : "App";
    lines.push(`${app}${title} on channel ${channel.id}:`, ...shown);
    const hidden = messages.length - shown.length;
    const poll = `poll_agent_messages {"channel_id":"${channel.id}"}`;
    if (lastShown === 0) {
      lines.push(`${hidden} message${hidden === 1 ? "" : "s"} not shown here: read with ${poll}.`);
      continue;
    }
    const handled = messages.filter((message) => message.seq <= lastShown);
    const only = handled.length === 1 ? handled[0]! : undefined;
    const threadId = only?.event === ASK_EVENT ? threadOf(only) : undefined;
    const target = `"channel_id":"${channel.id}"`;
    // The ack carries its queue's epoch, so that it clears nothing of a queue that started again meanwhile.
    const ack = epoch === NO_EPOCH ? `"ack":${lastShown}` : `"ack":${lastShown},"ack_epoch":"${epoch}"`;
    const answer =
      threadId !== undefined
        ? `Answer with notify_ui {${target},"event":"answer","data":{"thread_id":${JSON.stringify(threadId)},"text":"…"},${ack}} (ack clears it once answered).`
        : `Answer each ask with notify_ui {${target},"event":"answer","data":{"thread_id":"<its thread_id>","text":"…"}} and add ${ack} to your last call to this channel (it clears the messages up to #${lastShown}).`;
    const more = hidden > 0 ? ` ${hidden} more not shown: ${poll}.` : ` Whole messages: ${poll}.`;
    lines.push(`${answer}${more}`);
    used += 400;
  }
  return lines.join("\n");
}

/** One message: an ask as its thread, question and passage; anything else as its event and data. */
function describeMessage(message: QueueMessage): string {
  const data = message.data;
  const record = typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  const threadId = threadOf(message);
  if (message.event === ASK_EVENT && record && typeof record.question === "string" && threadId !== undefined) {
    const quote =
      typeof record.quote === "string" && record.quote.trim() !== "" ? ` (on the passage "${oneLine(record.quote, WAKE_QUOTE_CHARS)}")` : "";
    return `ask, thread_id ${JSON.stringify(threadId)}: "${oneLine(record.question, WAKE_MESSAGE_CHARS)}"${quote}`;
  }
  const json = data === undefined ? "{}" : JSON.stringify(data);
  return `${oneLine(message.event, WAKE_QUOTE_CHARS)}: ${oneLine(json, WAKE_MESSAGE_CHARS)}`;
}

/** The thread id of a reader ask, made safe and short; `undefined` when it has none. */
function threadOf(message: QueueMessage): string | undefined {
  const data = message.data as Record<string, unknown> | null | undefined;
  const threadId = typeof data === "object" && data !== null ? data.thread_id : undefined;
  return typeof threadId === "string" && threadId !== "" ? oneLine(threadId, WAKE_QUOTE_CHARS) : undefined;
}
