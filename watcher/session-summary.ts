/**
 * What the session watcher tells the agent: each channel with mail (by its title), the
 * messages themselves, and the one call that answers an ask and clears it, so that a
 * wake costs the model one tool call and the end of its turn.
 *
 * Everything in it comes from outside (the app wrote the messages, the model the
 * titles): each piece goes through `oneLine` (no escapes, no control characters, no
 * invisible characters, no newlines of its own) and is cut to its limit, and the whole,
 * every line counted, stays within {@link WAKE_SUMMARY_CHARS}; what does not fit is
 * counted and left for a poll.
 */
import { ASK_EVENT, READER_APP } from "../core/events.js";
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
 *
 * Invariant: the whole, every line and newline counted, is at most `maxChars`
 * characters. A channel shows the oldest of its messages that fit with its heading and
 * answer line (a prefix: `ack` clears up to the last one shown); a channel that does not
 * fit at all, and every one after it, is counted in a last line that says where to read
 * them.
 * @param maxChars default {@link WAKE_SUMMARY_CHARS}.
 */
export function describeMail(mail: ChannelMail[], maxChars: number = WAKE_SUMMARY_CHARS): string {
  const total = mail.reduce((sum, box) => sum + box.messages.length, 0);
  const lines = [
    `backchannel: ${total} message${total === 1 ? "" : "s"} from the app${total === 1 ? "" : "s"} in this chat. Answer now; backchannel wakes you again for the next (arm no watcher).`,
  ];
  // Room for the last line, and its newline, is kept until every channel is shown.
  let room = maxChars - characterCount(lines[0]!) - 1 - characterCount(leftOut(total, mail.length));
  let left = 0;
  for (const [index, box] of mail.entries()) {
    const block = left === 0 ? channelBlock(box, room - 1) : undefined;
    if (block === undefined) {
      left = mail.slice(index).reduce((sum, rest) => sum + rest.messages.length, 0);
      break;
    }
    lines.push(block);
    room -= characterCount(block) + 1;
  }
  if (left > 0) lines.push(leftOut(left, mail.length - (lines.length - 1)));
  return lines.join("\n");
}

/** The last line, for `messages` on `channels` channels not shown. */
function leftOut(messages: number, channels: number): string {
  return (
    `${messages} more message${messages === 1 ? "" : "s"} on ${channels} more channel${channels === 1 ? "" : "s"} of this chat not shown here: ` +
    `read each channel with poll_agent_messages {"channel_id":"<its id>"}.`
  );
}

/**
 * One channel's lines, at most `room` characters with their newlines: the heading, the
 * oldest messages that fit and the answer line; or, when no message fits, the heading
 * and where to read them.
 * @returns `undefined` when not even that fits.
 */
function channelBlock({ channel, messages, epoch }: ChannelMail, room: number): string | undefined {
  const title = channel.title === undefined ? "" : ` "${oneLine(channel.title, WAKE_QUOTE_CHARS)}"`;
  const isReader = channel.app === READER_APP;
  const heading = `${isReader ? "Reader" : "App"}${title} on channel ${channel.id}:`;
  const poll = `poll_agent_messages {"channel_id":"${channel.id}"}`;
  const shown: string[] = [];
  let answer: string | undefined;
  let used = characterCount(heading);
  for (const [index, message] of messages.entries()) {
    const line = `- #${message.seq} ${describeMessage(message)}`;
    const next = answerLine(channel.id, isReader, message.seq, epoch, index === 0 ? message : undefined, messages.length - index - 1, poll);
    if (used + 1 + characterCount(line) + 1 + characterCount(next) > room) break;
    shown.push(line);
    used += 1 + characterCount(line);
    answer = next;
  }
  if (answer !== undefined) return [heading, ...shown, answer].join("\n");
  const count = messages.length;
  const unshown = `${heading}\n${count} message${count === 1 ? "" : "s"} not shown here: read with ${poll}.`;
  return characterCount(unshown) <= room ? unshown : undefined;
}

/**
 * The line after a channel's messages up to `lastShown` of queue epoch `epoch` (`first`
 * when that is the first alone; `hidden` more not shown): how to answer and clear them,
 * and how to read the rest. The reader's messages are answered with its `answer` event;
 * an agent-written app's (`isReader` false) with the events the agent gave it.
 */
function answerLine(
  channelId: string,
  isReader: boolean,
  lastShown: number,
  epoch: string,
  first: QueueMessage | undefined,
  hidden: number,
  poll: string,
): string {
  const threadId = first?.event === ASK_EVENT ? threadOf(first) : undefined;
  const target = `"channel_id":"${channelId}"`;
  // The ack carries its queue's epoch, so that it clears nothing of a queue that started again meanwhile.
  const ack = epoch === NO_EPOCH ? `"ack":${lastShown}` : `"ack":${lastShown},"ack_epoch":"${epoch}"`;
  const answer = !isReader
    ? `Reply with notify_ui {${target},"event":"<your app's event>","data":{…}} and add ${ack} to your last call to this channel (it clears the messages up to #${lastShown}).`
    : threadId !== undefined
      ? `Answer with notify_ui {${target},"event":"answer","data":{"thread_id":${JSON.stringify(threadId)},"text":"…"},${ack}} (ack clears it once answered).`
      : `Answer each ask with notify_ui {${target},"event":"answer","data":{"thread_id":"<its thread_id>","text":"…"}} and add ${ack} to your last call to this channel (it clears the messages up to #${lastShown}).`;
  const more = hidden > 0 ? ` ${hidden} more not shown: ${poll}.` : ` Whole messages: ${poll}.`;
  return `${answer}${more}`;
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
