/**
 * The browser host's files in the data directory (docs/ARCHITECTURE.md, "The browser
 * host"): how a process finds the one host of a store, and the key its links carry.
 *
 *     <data dir>/browser/secret              the key every link carries (random, 0600)
 *     <data dir>/browser/<store>.json        the running host of a store: its pid and URL
 *     <data dir>/browser/<store>.json.lock   held by that host for as long as it runs
 *     <data dir>/browser/<store>.start.lock  held by a process while it starts a host
 *     <data dir>/browser/<store>.log         what a host started in the background printed
 *
 * A host is running exactly while its lock is held by a live process (core/fs/lock.ts
 * judges liveness by pid and start time, never by clocks), and its record names that
 * process: a record left by a killed host is never taken for a live one.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./fs/atomic-write.js";
import { judgeLock } from "./fs/lock.js";
import { reachFolder, readTextFile } from "./fs/safe-open.js";
import { writeAll } from "./fs/write-all.js";
import { FILE_MODE, lockPathOf } from "./paths.js";

/** How a store is named among the hosts of a data directory: `files`, or `redis-<16 hex digits>`. */
export const BROWSER_STORE_KEY_PATTERN = /^(files|redis-[0-9a-f]{16})$/;

/** What a running host writes about itself. */
export interface BrowserHostRecord {
  pid: number;
  /** Where it listens, `http://127.0.0.1:<port>/`. */
  url: string;
  /** The backchannel version it runs. */
  version: string;
  started_at: string;
}

/** The files of the host of one store (see the top of this module). */
export interface BrowserHostFiles {
  folder: string;
  secret: string;
  record: string;
  /** The lock a process holds while it starts a host, so that only one starts at a time. */
  starting: string;
  log: string;
}

/** Largest record or secret file read: both are one short line. */
const MAX_FILE_BYTES = 4096;

/**
 * The files of the host of the store `storeKey` in `dataDir`.
 * @throws Error when `storeKey` does not match {@link BROWSER_STORE_KEY_PATTERN}.
 */
export function browserHostFiles(dataDir: string, storeKey: string): BrowserHostFiles {
  if (!BROWSER_STORE_KEY_PATTERN.test(storeKey)) throw new Error(`${JSON.stringify(storeKey)} does not name a store's browser host`);
  const folder = join(dataDir, "browser");
  return {
    folder,
    secret: join(folder, "secret"),
    record: join(folder, `${storeKey}.json`),
    starting: join(folder, `${storeKey}.start`),
    log: join(folder, `${storeKey}.log`),
  };
}

/**
 * The host that runs for `files` now: its record, when its lock is held by a live
 * process and the record names that process; else `undefined`.
 * @throws UnsafeLayoutError when the folder or a file is another user's or writable by others.
 */
export function runningBrowserHost(dataDir: string, files: BrowserHostFiles): BrowserHostRecord | undefined {
  if (!reachFolder(dataDir, files.folder, { create: false })) return undefined;
  const verdict = judgeLock(lockPathOf(files.record));
  // Where the lock cannot tell (not Linux: no boot id), a host of this machine is one whose pid runs.
  const alive = verdict.state === "alive" || (verdict.state === "unknown" && verdict.holder.machine === null && pidRuns(verdict.holder.pid));
  if (!alive) return undefined;
  const record = parseRecord(readTextFile(files.record, MAX_FILE_BYTES));
  return record?.pid === verdict.holder.pid ? record : undefined;
}

/** Writes `record` as the host's (atomically, 0600). @throws I/O errors. */
export function writeBrowserHostRecord(files: BrowserHostFiles, record: BrowserHostRecord): void {
  writeFileAtomic(files.record, `${JSON.stringify(record)}\n`);
}

/**
 * The record of the store's last host, running or not (a host leaves it when it ends:
 * the next one listens on the same port when it can, so that open tabs find it again);
 * `null` when there is none or it cannot be read.
 */
export function readBrowserHostRecord(files: BrowserHostFiles): BrowserHostRecord | null {
  try {
    return parseRecord(readTextFile(files.record, MAX_FILE_BYTES));
  } catch {
    return null;
  }
}

/**
 * The key of the browser hosts of `dataDir`, made (32 random bytes, base64url, in a file
 * of mode 0600 in a folder of mode 0700) the first time.
 * @throws UnsafeLayoutError, NotRegularFileError when the file or its folder is not this user's alone; I/O errors.
 */
export function browserHostSecret(dataDir: string, files: BrowserHostFiles, warn: (message: string) => void): string {
  reachFolder(dataDir, files.folder, { create: true, warn });
  const existing = readTextFile(files.secret, MAX_FILE_BYTES)?.trim();
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const secret = randomBytes(32).toString("base64url");
  if (existing === undefined) {
    try {
      // "wx": of two processes making it at once, one writes it and the other reads that.
      const fd = openSync(files.secret, "wx", FILE_MODE);
      try {
        writeAll(fd, `${secret}\n`, files.secret);
      } finally {
        closeSync(fd);
      }
      return secret;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      return browserHostSecret(dataDir, files, warn);
    }
  }
  // A file that holds no key (cut short, edited): replaced whole.
  writeFileAtomic(files.secret, `${secret}\n`);
  return secret;
}

/** Whether `given` is `secret`, in time that does not depend on where they differ. */
export function isSecret(given: string, secret: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The link that opens `channelId` (none: the host's page of channels) in the host at `url`, with its key. */
export function browserHostLink(url: string, secret: string, channelId?: string): string {
  const link = new URL(url);
  link.searchParams.set("k", secret);
  if (channelId !== undefined) link.hash = channelId;
  return link.href;
}

/** Whether a process of this user runs with this pid (another user's, which refuses signal 0, is not a host of ours). */
function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A record's text parsed, or `null` for anything that is not one. */
function parseRecord(text: string | null): BrowserHostRecord | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const record = value as Partial<BrowserHostRecord> | null;
  if (typeof record !== "object" || record === null) return null;
  if (!Number.isSafeInteger(record.pid) || typeof record.url !== "string" || !/^http:\/\/127\.0\.0\.1:\d{1,5}\/$/.test(record.url)) return null;
  return { pid: record.pid!, url: record.url, version: String(record.version ?? ""), started_at: String(record.started_at ?? "") };
}
