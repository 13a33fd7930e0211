/**
 * Runs a session watcher (./session-watch.ts) for this process's host session, as both
 * `backchannel watch --session` and Claude Code's wake hook do: finds the session key
 * and the store as the server does, takes the session's claim, and stops quietly on
 * SIGTERM (which is how a newer watcher of the session ends this one). Every failure
 * comes back as an outcome, never as an exception, so that each caller maps it to its
 * own exit code.
 */
import { resolveDataDir } from "../core/paths.js";
import { sessionHostPid, sessionKey } from "../core/session-key.js";
import { openReader, storeLocationFromEnv, unusableLocation } from "../store/open.js";
import { SessionClaim } from "./session-claim.js";
import { type SessionWatchOutcome, watchSession } from "./session-watch.js";

/** What a run of the session watcher came to: the watch's outcome, or why it could not watch. */
export type SessionRunOutcome = SessionWatchOutcome | { kind: "failed"; reason: string };

/** Options of {@link runSessionWatcher}. */
export interface SessionRunOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** Where notes go. */
  err: (line: string) => void;
  /** The environment the session key and the store come from. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /**
   * The session to watch. Default: this process's (core/session-key.ts). A watcher that
   * runs detached from the host (Codex's waker) is given the key its hook found.
   */
  key?: string;
  /** The host's process, whose end ends the watch. Default: the one the key names. */
  hostPid?: number;
  /** End at once (outcome `ended`) when the session has no channel: there is nothing to wait for. Default false. */
  onlyWithChannels?: boolean;
  /** See ./session-watch.ts `stillWanted`. Default: none. */
  stillWanted?: () => string | undefined;
}

/**
 * Watches this process's session (the key of core/session-key.ts) until mail, the
 * timeout, a newer watcher, the end of the host process or SIGTERM.
 * @returns the outcome; `failed` with the reason for a store that cannot be used (no
 *   data directory, Redis away), a claim that cannot be written, or any other error.
 */
export async function runSessionWatcher(options: SessionRunOptions): Promise<SessionRunOutcome> {
  const env = options.env ?? process.env;
  const stop = new AbortController();
  const onTerm = () => stop.abort();
  process.once("SIGTERM", onTerm);
  try {
    const key = options.key ?? sessionKey(env);
    const location = storeLocationFromEnv(env);
    const problem = await unusableLocation(location);
    if (problem) return { kind: "failed", reason: problem };
    const opened = await openReader(location);
    try {
      return await watchSession({
        reader: opened.reader,
        key,
        claim: new SessionClaim(resolveDataDir(env), key, options.err),
        timeoutMs: options.timeoutMs,
        hostPid: options.hostPid ?? sessionHostPid(key),
        signal: stop.signal,
        err: options.err,
        onlyWithChannels: options.onlyWithChannels ?? false,
        ...(options.stillWanted ? { stillWanted: options.stillWanted } : {}),
      });
    } finally {
      await opened.close();
    }
  } catch (error) {
    return { kind: "failed", reason: (error as Error).message };
  } finally {
    process.off("SIGTERM", onTerm);
  }
}
