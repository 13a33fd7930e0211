/**
 * The record of a host session: what it has open, for whoever shows the human what
 * waits (the status line), and its wall, the agent's status for every app of the
 * session. Pure functions over the record; each store keeps it its own way.
 */
import { SESSION_MAX_CHANNELS } from "../core/limits.js";
import type { Wall } from "../protocol/wall.js";

/**
 * A channel of a session: its id, the app it serves (`reader`, or `channel` for any
 * other) and, once opened by `open_reader` or `open_app`, the title it was opened with
 * (what the session watcher names it by).
 */
export type SessionChannel = { id: string; app: string; title?: string };

/** The content of a session file. */
export type SessionRecord = { channels: SessionChannel[]; wall: Wall | null };

/** A session with nothing in it. */
export function emptySession(): SessionRecord {
  return { channels: [], wall: null };
}

/**
 * `record` with `channel` as its newest channel (moved to the end when it was there),
 * keeping at most {@link SESSION_MAX_CHANNELS}.
 */
export function withChannel(record: SessionRecord, channel: SessionChannel): SessionRecord {
  const others = record.channels.filter((known) => known.id !== channel.id);
  return { ...record, channels: [...others, channel].slice(-SESSION_MAX_CHANNELS) };
}

/** The wall of `record` while it lasts, else `null`. */
export function activeWall(record: SessionRecord, now: number = Date.now()): Wall | null {
  const wall = record.wall;
  return wall && Date.parse(wall.until) > now ? wall : null;
}

/**
 * The session record in `text` (a session file, or any stored copy of one); an empty
 * session when it does not parse or is not one: everything in a record is rebuilt as
 * channels are used again.
 */
export function parseSession(text: string): SessionRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return emptySession();
  }
  const record = value as Partial<SessionRecord> | null;
  if (typeof record !== "object" || record === null || !Array.isArray(record.channels)) return emptySession();
  const channels = record.channels
    .filter((channel): channel is SessionChannel => typeof channel?.id === "string" && typeof channel.app === "string")
    .map(({ id, app, title }) => (typeof title === "string" ? { id, app, title } : { id, app }));
  const wall = record.wall;
  const wallOk = wall && typeof wall.text === "string" && typeof wall.until === "string" && typeof wall.posted_at === "string";
  return { channels, wall: wallOk ? wall : null };
}
