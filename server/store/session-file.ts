/**
 * Session files (`<data dir>/sessions/<session key>.json`): what one host session has
 * open, for whoever shows the human what waits (the status line), and the session's
 * wall, the agent's status for every reader of the session.
 *
 * Invariants:
 * - a session file is changed only under its lock, by whole-file atomic replacement,
 *   so a reader without the lock (the status line) sees a whole file;
 * - a file that does not parse reads as an empty session and is replaced by the next
 *   write: everything in it is rebuilt as channels are used again;
 * - the channel list is an index for speed; what a channel itself records
 *   (`state.session.json`) says which session it belongs to.
 */
import { mkdirSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { SESSION_KEY_PATTERN } from "../core/ids.js";
import { SESSION_MAX_CHANNELS } from "../core/limits.js";
import { sessionFile, sessionsDir } from "../core/paths.js";
import { writeFileAtomic } from "./atomic-write.js";
import { withLock } from "./lock.js";
import { CorruptQueueFileError, readTextNoFollow } from "./queue-file.js";

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
 * Changes a session file under its lock: `update` gets the current record and returns
 * the new one, which replaces the file atomically.
 * @returns the new record.
 * @throws LockTimeoutError, I/O errors, whatever `update` throws (nothing changed then).
 */
export async function updateSession(
  dataDir: string,
  key: string,
  lockStaleMs: number,
  update: (current: SessionRecord) => SessionRecord,
): Promise<SessionRecord> {
  const path = sessionFile(dataDir, key);
  mkdirSync(sessionsDir(dataDir), { recursive: true, mode: 0o700 });
  return withLock(path, lockStaleMs, (lock) => {
    const next = update(readSession(dataDir, key));
    lock.assertHeld();
    writeFileAtomic(path, JSON.stringify(next));
    return next;
  });
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
 * Removes session files not written for longer than `ttlMs` (the channels' idle time).
 * @returns how many were removed.
 */
export async function removeIdleSessions(dataDir: string, ttlMs: number, now: number = Date.now()): Promise<number> {
  const names = await readdir(sessionsDir(dataDir)).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith(".json") || !SESSION_KEY_PATTERN.test(name.slice(0, -".json".length))) continue;
    const path = join(sessionsDir(dataDir), name);
    const stats = await stat(path).catch(() => undefined);
    if (stats && now - stats.mtimeMs > ttlMs) {
      await rm(path, { force: true });
      removed += 1;
    }
  }
  return removed;
}

/** Checks the shape of a parsed session file. @throws Error when it is not one. */
function parseSession(value: unknown): SessionRecord {
  const record = value as Partial<SessionRecord> | null;
  if (typeof record !== "object" || record === null || !Array.isArray(record.channels)) throw new Error("not a session");
  const channels = record.channels.filter(
    (channel): channel is SessionChannel => typeof channel?.id === "string" && typeof channel.app === "string",
  );
  const wall = record.wall;
  const wallOk = wall && typeof wall.text === "string" && typeof wall.until === "string" && typeof wall.posted_at === "string";
  return { channels, wall: wallOk ? wall : null };
}
