/**
 * The idle sweep of a data directory: channels and session files nobody has used for
 * the channel TTL are removed, and temporary files left by killed writers are cleaned.
 *
 * Invariants: a channel with a lock held is never removed; removal goes through
 * {@link ChannelFolders.remove} (rename first, so it is atomic for everyone else).
 */
import { lstat, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { SESSION_KEY_PATTERN } from "../../core/ids.js";
import { channelDir, sessionsDir } from "../../core/paths.js";
import { TEMP_SUFFIX } from "./atomic-write.js";
import type { ChannelFolders } from "./channel-folders.js";

/** Temporary files older than this were left by a killed writer. */
const ORPHAN_TEMP_AGE_MS = 60 * 1000;

/**
 * Removes channels idle for longer than `ttlMs` (no write, and no poll for that long),
 * skipping any with a lock held; removes old temporary files; removes session files
 * idle for as long.
 * @returns the ids of the channels removed.
 */
export async function removeIdle(folders: ChannelFolders, ttlMs: number, now: number = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const channel of await folders.list()) {
    const dir = channelDir(folders.dataDir, channel.id);
    const entries = await readdir(dir).catch(() => [] as string[]);
    if (entries.some((name) => name.endsWith(".lock"))) continue;
    if (now - channel.lastActivity.getTime() > ttlMs) {
      await folders.remove(channel.id);
      removed.push(channel.id);
      continue;
    }
    for (const name of entries.filter((entry) => entry.endsWith(TEMP_SUFFIX))) {
      const stats = await lstat(join(dir, name)).catch(() => undefined);
      if (stats && now - stats.mtimeMs > ORPHAN_TEMP_AGE_MS) await rm(join(dir, name), { force: true });
    }
  }
  await removeIdleSessions(folders.dataDir, ttlMs, now);
  return removed;
}

/**
 * Removes session files not written for longer than `ttlMs`.
 * @returns how many were removed.
 */
async function removeIdleSessions(dataDir: string, ttlMs: number, now: number): Promise<number> {
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
