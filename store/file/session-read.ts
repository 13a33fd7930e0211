/**
 * Session files, `sessions/<key>.json` in the data directory, read without a lock. The
 * status line reads them every few seconds and must start fast, so this module loads
 * no lock library. A reader without the lock sees a whole file, because writers
 * (./session-files.ts) replace it atomically.
 */
import { basename } from "node:path";
import { sessionFile, sessionsDir } from "../../core/paths.js";
import { emptySession, parseSession, type SessionRecord } from "../session-record.js";
import type { ChangeSubscription, SessionReader } from "../store.js";
import { subscribeToFile } from "./folder-watch.js";
import { NotRegularFileError, readRegularFile } from "./safe-read.js";

/**
 * Reads the session file of `key` without its lock.
 * @returns an empty session when there is no file, or it is not a regular file or not a session.
 * @throws Error for an invalid key; I/O errors other than a missing file.
 */
export function readSessionFile(dataDir: string, key: string): SessionRecord {
  let text: string | null;
  try {
    text = readRegularFile(sessionFile(dataDir, key));
  } catch (error) {
    if (error instanceof NotRegularFileError) return emptySession();
    throw error;
  }
  return text === null ? emptySession() : parseSession(text);
}

/** Session files, read-only: for the status line and the watcher. */
export class SessionFileReader implements SessionReader {
  constructor(protected readonly dataDir: string) {}

  async read(key: string): Promise<SessionRecord> {
    return readSessionFile(this.dataDir, key);
  }

  watch(key: string): ChangeSubscription {
    return subscribeToFile(sessionsDir(this.dataDir), basename(sessionFile(this.dataDir, key)));
  }
}
