/**
 * Finding, or starting, the browser host of this server's store (docs/ARCHITECTURE.md,
 * "The browser host"): one per user and store, long-lived, shared by every server. A
 * server that needs one (a client that shows no apps opened the reader) finds it
 * through its record in the data directory (core/browser-host.ts); when none runs it
 * starts `backchannel web --background` by path, detached, so that the host outlives
 * the server (hosts restart their servers). Servers that need one at the same moment
 * start one between them: the start runs under the store's own lock.
 *
 * This module starts the command; it imports nothing above the server.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, constants, openSync } from "node:fs";
import {
  type BrowserHostFiles,
  type BrowserHostRecord,
  browserHostFiles,
  browserHostLink,
  browserHostSecret,
  runningBrowserHost,
} from "../core/browser-host.js";
import { CallerError } from "../core/errors.js";
import { withLock } from "../core/fs/lock.js";
import { readFileEnds, reachFolder } from "../core/fs/safe-open.js";
import { CLI_ENTRY } from "../core/package.js";
import { FILE_MODE, resolveDataDir } from "../core/paths.js";
import { warnOnStderr } from "../core/warn.js";
import { type StoreLocation, storeEnvironment } from "../store/open.js";
import type { BrowserLinks } from "./browser-links.js";

/** The browser host could not be started or found; the message says why and what to do. */
export class BrowserHostError extends CallerError {
  override readonly name = "BrowserHostError";
  override readonly code = "BROWSER_HOST";
}

/** Options of {@link localBrowserHost} and {@link ensureBrowserHost}. */
export interface BrowserHostOptions {
  /** The environment the host is started with (the store's variables are set for it). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** How long a host may take to start. Default 20,000 ms (a loaded machine takes seconds to load the server). */
  startTimeoutMs?: number;
}

/** Polls for a starting host this often. */
const START_POLL_MS = 50;

/** How a store is named among the hosts of a data directory: `files`, or `redis-` and a digest of its URL without the password. */
export function browserStoreKey(location: StoreLocation): string {
  if (location.kind === "file") return "files";
  return `redis-${createHash("sha256").update(location.shown).digest("hex").slice(0, 16)}`;
}

/** The data directory that holds the browser host's files for `location`: the file store's own, else this user's. */
export function browserDataDir(location: StoreLocation, env: NodeJS.ProcessEnv = process.env): string {
  return location.kind === "file" ? location.dataDir : resolveDataDir(env);
}

/** The browser host of the store at `location` as links to its channels, started when a link is asked for and none runs. */
export function localBrowserHost(location: StoreLocation, options: BrowserHostOptions = {}): BrowserLinks {
  return {
    async linkTo(channelId) {
      const record = await ensureBrowserHost(location, options);
      const dataDir = browserDataDir(location, options.env);
      return browserHostLink(record.url, browserHostSecret(dataDir, browserHostFiles(dataDir, browserStoreKey(location)), warnOnStderr), channelId);
    },
  };
}

/**
 * The running host of the store at `location`, started (and waited for) when none runs.
 * @throws BrowserHostError when it does not start within `options.startTimeoutMs`, or exits first (with what it printed).
 */
export async function ensureBrowserHost(location: StoreLocation, options: BrowserHostOptions = {}): Promise<BrowserHostRecord> {
  const env = options.env ?? process.env;
  const dataDir = browserDataDir(location, env);
  const files = browserHostFiles(dataDir, browserStoreKey(location));
  const running = runningBrowserHost(dataDir, files);
  if (running) return running;
  reachFolder(dataDir, files.folder, { create: true, warn: warnOnStderr });
  // One process starts it; those that come meanwhile find it started once the lock is theirs.
  return withLock(files.starting, { staleMs: 10_000, warn: warnOnStderr }, async () => {
    const started = runningBrowserHost(dataDir, files);
    if (started) return started;
    return startBrowserHost(location, dataDir, files, env, options.startTimeoutMs ?? 20_000);
  });
}

/** Starts `backchannel web --background` for `location`, detached, and waits for its record. */
async function startBrowserHost(
  location: StoreLocation,
  dataDir: string,
  files: BrowserHostFiles,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<BrowserHostRecord> {
  const log = openSync(files.log, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0), FILE_MODE);
  let exited: string | undefined;
  let pid: number | undefined;
  try {
    // Its own session (detached): it outlives this server, and no signal to the server's group reaches it.
    const child = spawn(process.execPath, [CLI_ENTRY, "web", "--background"], {
      detached: true,
      stdio: ["ignore", log, log],
      env: storeEnvironment(location, env),
    });
    pid = child.pid;
    child.once("exit", (code, signal) => (exited = signal ? `it was killed (${signal})` : `it exited with code ${code}`));
    child.once("error", (error) => (exited = `it could not be run (${error.message})`));
    child.unref();
  } finally {
    closeSync(log);
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && exited === undefined) {
    // Ours, or one started meanwhile without this lock (`backchannel web` in a terminal): ours then exits by itself.
    const record = runningBrowserHost(dataDir, files);
    if (record) return record;
    await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
  }
  if (exited === undefined && pid !== undefined) process.kill(pid, "SIGTERM");
  const printed = readFileEnds(files.log, 400).trim().replace(/\s+/g, " ");
  const why = exited ?? `it did not start within ${Math.round(timeoutMs / 1000)} s`;
  throw new BrowserHostError(`the browser host did not start: ${why}${printed ? `; it printed: ${printed}` : ""} (its log: ${files.log})`);
}
