/**
 * The content of a session file (`<data dir>/sessions/<session key>.json`) and how it
 * is read: what one host session has open, for whoever shows the human what waits
 * (the status line), and the session's wall, the agent's status for every reader of
 * the session. Writing is in ./session-file.ts.
 *
 * This module takes no lock and loads no lock library: the status line reads session
 * files every few seconds, and its start-up time is the host's to wait for. A reader
 * without the lock sees a whole file, because writers replace it atomically.
 */
import { sessionFile } from "../core/paths.js";
import { SESSION_MAX_CHANNELS } from "../core/limits.js";
import { CorruptQueueFileError, readTextNoFollow } from "./file/queue-file.js";

/** A channel of a session: its id and the app it serves (`reader`, or `channel` for any other). */
export type SessionChannel = { id: string; app: string };

/** The agent's status for every reader of a session, up until `until` (ISO-8601). */
export type Wall = { text: string; posted_at: string; until: string };

/** The content of a session file. */
export type SessionRecord = { channels: SessionChannel[]; wall: Wall | null };

/** A session with nothing in it. */
export function emptySession(): SessionRecord {
  return { channels: [], wall: null };
}

/**
 * Reads a session file without its lock (synchronous: the status line runs it often and
 * must start fast).
 * @returns an empty session when there is no file or it does not parse.
 * @throws Error for an invalid key; I/O errors other than a missing file.
 */
export function readSession(dataDir: string, key: string): SessionRecord {
  let text: string | null;
  try {
    text = readTextNoFollow(sessionFile(dataDir, key));
  } catch (error) {
    if (error instanceof CorruptQueueFileError) return emptySession();
    throw error;
  }
  if (text === null) return emptySession();
  try {
    return parseSession(JSON.parse(text));
  } catch {
    return emptySession();
  }
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

/** Checks the shape of a parsed session file. @throws Error when it is not one. */
function parseSession(value: unknown): SessionRecord {
  const record = value as Partial<SessionRecord> | null;
  if (typeof record !== "object" || record === null || !Array.isArray(record.channels)) throw new Error("not a session");
  const channels = record.channels.filter((channel): channel is SessionChannel => typeof channel?.id === "string" && typeof channel.app === "string");
  const wall = record.wall;
  const wallOk = wall && typeof wall.text === "string" && typeof wall.until === "string" && typeof wall.posted_at === "string";
  return { channels, wall: wallOk ? wall : null };
}
