/**
 * Session files changed under their lock: the file-backed {@link SessionStore}.
 *
 * Invariants:
 * - a session file is changed only under its lock, by whole-file atomic replacement,
 *   so a reader without the lock (./session-read.ts) sees a whole file;
 * - a file that does not parse reads as an empty session and is replaced by the next
 *   write: everything in it is rebuilt as channels are used again;
 * - the channel list is an index for speed; what a channel itself records
 *   (its state document `session`) says which session it belongs to.
 */
import { mkdirSync } from "node:fs";
import { sessionFile, sessionsDir } from "../../core/paths.js";
import type { SessionRecord } from "../session-record.js";
import type { ChangeSubscription, SessionStore } from "../store.js";
import { writeFileAtomic } from "./atomic-write.js";
import { withLock } from "./lock.js";
import { readSessionFile, SessionFileReader } from "./session-read.js";

/** Session files in one data directory. */
export class SessionFiles extends SessionFileReader implements SessionStore {
  /**
   * @param dataDir the data directory.
   * @param lockStaleMs when a session file's lock counts as left by a killed process.
   */
  constructor(
    dataDir: string,
    private readonly lockStaleMs: number,
  ) {
    super(dataDir);
  }

  override watch(key: string): ChangeSubscription {
    mkdirSync(sessionsDir(this.dataDir), { recursive: true, mode: 0o700 });
    return super.watch(key);
  }

  async update(key: string, update: (current: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const path = sessionFile(this.dataDir, key);
    mkdirSync(sessionsDir(this.dataDir), { recursive: true, mode: 0o700 });
    return withLock(path, this.lockStaleMs, (lock) => {
      const next = update(readSessionFile(this.dataDir, key));
      lock.assertHeld();
      writeFileAtomic(path, JSON.stringify(next));
      return next;
    });
  }
}
