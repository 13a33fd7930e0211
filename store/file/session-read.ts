/**
 * Session files, `sessions/<key>.json` in the data directory, read without a lock. The
 * status line reads them every few seconds and must start fast, so this module loads
 * no lock library. A reader without the lock sees a whole file, because writers
 * (./session-files.ts) replace it atomically. Folders and files are reached through
 * core/fs/safe-open.ts.
 */
import { basename } from "node:path";
import { sessionFile, sessionsDir } from "../../core/paths.js";
import { emptySession, parseSession, type SessionRecord } from "../session-record.js";
import type { ChangeSubscription, SessionReader } from "../store.js";
import { subscribeToFile } from "./folder-watch.js";
import { READ_ONLY, reachFolder, readTextFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";

/** The largest session file read: a record holds a few dozen channels and one wall, far below this. */
export const SESSION_FILE_MAX_BYTES = 256 * 1024;

/**
 * Reads the session file of `key` without its lock.
 * @returns an empty session when there is no file, or it (or `sessions/`) is not what
 *   belongs there (a link, a pipe, an oversized file), or it is not a session.
 * @throws Error for an invalid key; UnsafeLayoutError; I/O errors other than a missing file.
 */
export function readSessionFile(dataDir: string, key: string): SessionRecord {
  const path = sessionFile(dataDir, key);
  let text: string | null;
  try {
    text = reachFolder(dataDir, sessionsDir(dataDir), READ_ONLY) ? readTextFile(path, SESSION_FILE_MAX_BYTES) : null;
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return emptySession();
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
