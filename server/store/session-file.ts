/**
 * Writing session files (see ./session-record.ts for their content).
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
import { sessionFile, sessionsDir } from "../core/paths.js";
import { writeFileAtomic } from "./atomic-write.js";
import { withLock } from "./lock.js";
import { readSession, type SessionRecord } from "./session-record.js";

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
