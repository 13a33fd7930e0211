/**
 * Session files changed under their lock: the file-backed {@link SessionStore}.
 *
 * Invariants:
 * - a session file is changed only under its lock, by whole-file atomic replacement,
 *   so a reader without the lock (./session-read.ts) sees a whole file;
 * - `sessions/` is reached through core/fs/safe-open.ts: a link or a file in its place is
 *   moved aside, never written through;
 * - a file that does not parse reads as an empty session and is replaced by the next
 *   write: everything in it is rebuilt as channels are used again;
 * - the channel list is an index for speed; what a channel itself records
 *   (its state document `session`) says which session it belongs to.
 */
import { sessionFile, sessionsDir } from "../../core/paths.js";
import type { SessionRecord } from "../session-record.js";
import type { ChangeSubscription, SessionStore } from "../store.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { withLock } from "../../core/fs/lock.js";
import { reachFolder } from "../../core/fs/safe-open.js";
import { readSessionFile, SessionFileReader } from "./session-read.js";

/** Session files in one data directory. */
export class SessionFiles extends SessionFileReader implements SessionStore {
  /**
   * @param dataDir the data directory.
   * @param lockStaleMs how long a waiter must see a session file's lock unchanged before breaking it (core/fs/lock.ts).
   * @param warn where something moved aside from the way is reported.
   * @param reachDataDir makes the data directory before anything is made in it (a principal's folder, reached from the store's; ./file-store.ts). Default: nothing to do.
   */
  constructor(
    dataDir: string,
    private readonly lockStaleMs: number,
    private readonly warn: (message: string) => void,
    private readonly reachDataDir: () => void = () => undefined,
  ) {
    super(dataDir);
  }

  override watch(key: string): ChangeSubscription {
    this.ensureFolder();
    return super.watch(key);
  }

  async update(key: string, update: (current: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const path = sessionFile(this.dataDir, key);
    this.ensureFolder();
    return withLock(path, { staleMs: this.lockStaleMs, remakeFolder: () => this.ensureFolder(), warn: this.warn }, (lock) => {
      const next = update(readSessionFile(this.dataDir, key));
      lock.assertHeld();
      writeFileAtomic(path, JSON.stringify(next));
      return next;
    });
  }

  private ensureFolder(): void {
    this.reachDataDir();
    reachFolder(this.dataDir, sessionsDir(this.dataDir), { create: true, warn: this.warn });
  }
}
