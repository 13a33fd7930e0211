/**
 * Session files as a store: read, changed under their lock, watched, and swept when
 * idle. Their content, and the lock-free read the status line uses, are in ./session-record.ts.
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
import { basename, join } from "node:path";
import { SESSION_KEY_PATTERN } from "../../core/ids.js";
import { sessionFile, sessionsDir } from "../../core/paths.js";
import { writeFileAtomic } from "./atomic-write.js";
import { subscribeToFile } from "./change-watch.js";
import { withLock } from "./lock.js";
import { readSession, type SessionRecord } from "../session-record.js";
import type { ChangeSubscription, SessionStore } from "../store.js";

/** Session files in one data directory: the file-backed {@link SessionStore}. */
export class SessionFiles implements SessionStore {
  /**
   * @param dataDir the data directory.
   * @param lockStaleMs when a session file's lock counts as left by a killed process.
   */
  constructor(
    private readonly dataDir: string,
    private readonly lockStaleMs: number,
  ) {}

  async read(key: string): Promise<SessionRecord> {
    return readSession(this.dataDir, key);
  }

  async update(key: string, update: (current: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const path = sessionFile(this.dataDir, key);
    mkdirSync(sessionsDir(this.dataDir), { recursive: true, mode: 0o700 });
    return withLock(path, this.lockStaleMs, (lock) => {
      const next = update(readSession(this.dataDir, key));
      lock.assertHeld();
      writeFileAtomic(path, JSON.stringify(next));
      return next;
    });
  }

  watch(key: string): ChangeSubscription {
    const name = basename(sessionFile(this.dataDir, key));
    mkdirSync(sessionsDir(this.dataDir), { recursive: true, mode: 0o700 });
    return subscribeToFile(sessionsDir(this.dataDir), name);
  }
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
