/**
 * What waits on a host session's channels, as one short line for the status line:
 * `reader: 2 questions · Reading chapter 3 (until 14:30)`.
 *
 * It reads the session record and each channel's agent queue through the store's
 * read-only view (no lock, no write, no repair): the status line runs every few seconds
 * and must not disturb the server.
 */
import { ASK_EVENT, ringsDoorbell } from "../core/events.js";
import { STATUSLINE_WALL_CHARS } from "../core/limits.js";
import { oneLine } from "../core/text.js";
import type { QueueMessage } from "../protocol/message.js";
import type { Wall } from "../protocol/wall.js";
import { activeWall, type SessionRecord } from "../store/session-record.js";
import type { ChannelReader } from "../store/store.js";

/** Questions and other messages waiting for the agent on the channels of one app. */
interface Counts {
  questions: number;
  messages: number;
}

/**
 * The status line segment of session `key` in the store `reader` reads, at time `now`: per app (in the
 * order of the session's channels), its waiting `ask` events as questions and other
 * events that ring (core/events.ts: all but the reader's `ready`) as messages, then the wall while it lasts; `""` when nothing
 * waits and no wall is up. Never throws: what cannot be read counts as nothing waiting.
 */
export async function waitingLine(reader: ChannelReader, key: string, now: number = Date.now()): Promise<string> {
  let record: SessionRecord;
  try {
    record = await reader.sessions.read(key);
  } catch {
    return "";
  }
  const byApp = new Map<string, Counts>();
  for (const channel of record.channels) {
    const counts = byApp.get(channel.app) ?? { questions: 0, messages: 0 };
    for (const message of await waitingMessages(reader, channel.id)) {
      if (message.event === ASK_EVENT) counts.questions += 1;
      else if (ringsDoorbell(message.event, channel.app)) counts.messages += 1;
    }
    byApp.set(channel.app, counts);
  }
  const segments: string[] = [];
  for (const [app, { questions, messages }] of byApp) {
    const parts = [plural(questions, "question"), plural(messages, "message")].filter((part) => part !== "");
    if (parts.length > 0) segments.push(`${app}: ${parts.join(", ")}`);
  }
  const wall = activeWall(record, now);
  if (wall) segments.push(describeWall(wall));
  return segments.join(" · ");
}

/** The messages in the agent queue of a channel; none when it is missing, corrupt, unreadable or its id is bad. */
async function waitingMessages(reader: ChannelReader, channelId: string): Promise<QueueMessage[]> {
  try {
    return await reader.peek(channelId, "agent");
  } catch {
    return [];
  }
}

/** `1 question`, `2 questions`, or `""` for none. */
function plural(count: number, noun: string): string {
  return count === 0 ? "" : `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** The wall as `<text> (until HH:MM)`, local time, on one line and cut to {@link STATUSLINE_WALL_CHARS}. */
function describeWall(wall: Wall): string {
  const text = oneLine(wall.text, STATUSLINE_WALL_CHARS);
  const until = new Date(wall.until);
  const time = `${String(until.getHours()).padStart(2, "0")}:${String(until.getMinutes()).padStart(2, "0")}`;
  return `${text} (until ${time})`;
}
