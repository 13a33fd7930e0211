/**
 * The idle sweep of a data directory: channels and session files nobody has used for
 * the channel TTL are removed, and temporary files left by killed writers are cleaned.
 *
 * Invariants:
 * - idleness is measured by the file system's clock alone: a folder's or file's mtime
 *   against the time the file system stamps on an entry made for the purpose
 *   ({@link ChannelFolders.fileSystemNow}), so that a process whose clock is off can
 *   neither make a live channel look idle nor find one idle;
 * - a channel is never removed while a queue of it holds a message (unread, or read but
 *   not yet acknowledged), while a poll waits on it (a waiting poll marks its channel in
 *   use at least four times per TTL), or while a live process holds one of its locks;
 *   a lock left by a dead process does not keep a channel;
 * - the last check that the queues are empty is made under both queue locks, and the
 *   folder is renamed away while they are held, so no message appended meanwhile is lost;
 * - nothing is removed through a link: folders are reached through core/fs/safe-open.ts, the
 *   channel folder is removed by {@link ChannelFolders.remove}, and only regular files
 *   are removed from `sessions/`.
 */
import { readdirSync } from "node:fs";
import { lstat, readdir, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { SESSION_KEY_PATTERN } from "../../core/ids.js";
import type { Limits } from "../../core/limits.js";
import { channelDir, QUEUE_NAMES, queueFile, sessionsDir } from "../../core/paths.js";
import { TEMP_SUFFIX } from "../../core/fs/atomic-write.js";
import { type ChannelFolders, TOUCH_PREFIX } from "./channel-folders.js";
import { judgeLock, withLock } from "../../core/fs/lock.js";
import { maxLogBytes, readLog } from "./log-format.js";
import { lstatOrNull, reachFolder } from "../../core/fs/safe-open.js";

/** Temporary files older than this were left by a killed writer. */
const ORPHAN_TEMP_AGE_MS = 60 * 1000;

/**
 * Removes channels idle for longer than the channel TTL that hold no message and no
 * live lock; removes old temporary files; removes session files idle for as long.
 * A channel that cannot be judged (a queue that does not parse, a lock of another user)
 * is kept.
 * @returns the ids of the channels removed.
 */
export async function removeIdle(
  folders: ChannelFolders,
  limits: Pick<Limits, "channelTtlMs" | "lockStaleMs" | "maxQueueBytes" | "maxMessageBytes">,
): Promise<string[]> {
  const ttlMs = limits.channelTtlMs;
  const now = folders.fileSystemNow();
  const removed: string[] = [];
  for (const channel of await folders.list()) {
    const dir = channelDir(folders.dataDir, channel.id);
    try {
      if (now - channel.lastActivity.getTime() <= ttlMs) {
        await removeOrphans(dir, now);
        continue;
      }
      if (!isUnused(folders, channel.id, now, limits)) continue;
      if (await removeUnderLocks(folders, channel.id, limits)) removed.push(channel.id);
    } catch (error) {
      folders.warn(`idle sweep: kept channel ${channel.id}: ${(error as Error).message}`);
    }
  }
  await removeIdleSessions(folders, ttlMs, now);
  return removed;
}

/** True when no queue of the channel holds a message and no live process holds one of its locks. */
function isUnused(folders: ChannelFolders, channelId: string, now: number, limits: Parameters<typeof removeIdle>[1]): boolean {
  for (const queue of QUEUE_NAMES) {
    if ((readLog(queueFile(folders.dataDir, channelId, queue), maxLogBytes(limits))?.queue.messages.length ?? 0) > 0) return false;
  }
  const dir = channelDir(folders.dataDir, channelId);
  for (const name of readdirSyncSafe(dir)) {
    if (!name.endsWith(".lock") && !name.endsWith(".lock.break")) continue;
    const verdict = judgeLock(join(dir, name));
    if (verdict.state === "alive") return false;
    // A holder that cannot be checked beats inside its folder: one that moved within the TTL may live.
    const stats = verdict.state === "unknown" ? lstatOrNull(join(dir, name)) : null;
    if (stats && now - stats.mtimeMs <= limits.channelTtlMs) return false;
  }
  return true;
}

/**
 * Checks again, under both queue locks, that the queues are empty, and removes the
 * channel while holding them (its folder, locks included, is renamed away at once).
 * @returns true when the channel was removed.
 */
async function removeUnderLocks(folders: ChannelFolders, channelId: string, limits: Parameters<typeof removeIdle>[1]): Promise<boolean> {
  const options = { staleMs: limits.lockStaleMs, warn: folders.warn };
  const [first, second] = QUEUE_NAMES.map((queue) => queueFile(folders.dataDir, channelId, queue)) as [string, string];
  return withLock(first, options, () =>
    withLock(second, options, async () => {
      for (const path of [first, second]) {
        if ((readLog(path, maxLogBytes(limits))?.queue.messages.length ?? 0) > 0) return false;
      }
      await folders.remove(channelId);
      return true;
    }),
  );
}

/** Removes temporary files and touch entries left in a channel folder by killed processes. */
async function removeOrphans(dir: string, now: number): Promise<void> {
  for (const name of readdirSyncSafe(dir)) {
    if (!name.endsWith(TEMP_SUFFIX) && !name.startsWith(TOUCH_PREFIX)) continue;
    const stats = await lstat(join(dir, name)).catch(() => undefined);
    if (!stats || now - stats.mtimeMs <= ORPHAN_TEMP_AGE_MS) continue;
    // A temporary file is a regular file, a touch entry an empty folder: anything else is left alone.
    if (stats.isFile()) await unlink(join(dir, name)).catch(() => undefined);
    else if (stats.isDirectory() && name.startsWith(TOUCH_PREFIX)) await rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

/** A session key as versions before the digest wrote it (`claude-<pid>`): its files are swept like the others once idle. */
const FORMER_SESSION_KEY = /^(claude|pid)-[0-9]{1,10}$/;

/**
 * Removes session files not written for longer than `ttlMs` (by the file system's clock);
 * only regular files whose names are session keys (or were, {@link FORMER_SESSION_KEY}).
 * @returns how many were removed.
 */
async function removeIdleSessions(folders: ChannelFolders, ttlMs: number, now: number): Promise<number> {
  const dir = sessionsDir(folders.dataDir);
  if (!reachFolder(folders.dataDir, dir, folders.writer)) return 0;
  let removed = 0;
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".json")) continue;
    const key = name.slice(0, -".json".length);
    if (!SESSION_KEY_PATTERN.test(key) && !FORMER_SESSION_KEY.test(key)) continue;
    const path = join(dir, name);
    const stats = lstatOrNull(path);
    if (stats?.isFile() && now - stats.mtimeMs > ttlMs) {
      await unlink(path).catch(() => undefined);
      removed += 1;
    }
  }
  return removed;
}

function readdirSyncSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
