/**
 * How Codex CLI's agent stays reachable (docs/hosts.md, "Codex CLI"). Codex gives an idle
 * session a turn when a message is queued for its thread (`codex queue --thread <id>
 * --message <text> --resume`, run by the app-server daemon that hosts the TUI's
 * threads); a background command's exit gives none.
 *
 * - `backchannel hook codex-stop` is Codex's `Stop` hook: after every turn it starts the
 *   waker for the thread whose turn ended, detached, and returns at once (it must never
 *   hold the turn).
 * - `backchannel hook codex-wake` is the waker: a session watcher (watcher/) of the
 *   session the hook ran in. When a message waits that the agent was not told of, it
 *   queues the summary for the thread, which gives the agent a turn with the asks in it,
 *   and watches on. The newest waker of a session ends the one before (the session's
 *   claim), and a waker ends with the host process.
 *
 * Nothing here wakes the model but mail: a failure (no store, a claim that cannot be
 * written, `codex queue` failing) is noted in the waker's log and never retried for the
 * same messages (they were announced), so a broken waker costs no model request.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readlinkSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { CLI_ENTRY } from "../core/package.js";
import { FILE_MODE, FOLDER_MODE, resolveDataDir, watcherClaimFile } from "../core/paths.js";
import { sessionKey } from "../core/session-key.js";
import { oneLine } from "../core/text.js";
import { hookInputProblem } from "../claude-code/stop-hook.js";
import { readStdin } from "../claude-code/stdin.js";
import { runSessionWatcher } from "../watcher/session-run.js";

/** How long one watch of the waker lasts before it looks again (it watches on until the host ends). */
const WATCH_SPAN_MS = 24 * 3_600_000;

/** How long `codex queue` may take. */
const QUEUE_TIMEOUT_MS = 60_000;

/** A waker's log grows to this size, then starts over. */
const MAX_LOG_BYTES = 256 * 1024;

/** What starts the waker: the thread whose turn ended, the session it belongs to, and the host process. */
export interface WakerTarget {
  thread: string;
  key: string;
  hostPid: number;
}

/**
 * Runs the Stop hook: reads Codex's hook input from stdin and starts the waker for its
 * thread. Prints `{}` (no decision: the turn ends as it would) and returns 0, always;
 * what went wrong goes to stderr.
 */
export async function runCodexStopHook(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const note = (line: string) => process.stderr.write(`backchannel hook codex-stop: ${oneLine(line)}\n`);
  try {
    const text = await readStdin();
    const problem = hookInputProblem(text, { host: "Codex", event: "Stop", eventRequired: true });
    const thread = problem === undefined ? threadOf(text!) : undefined;
    if (problem || thread === undefined) note(`${problem ?? "the hook input names no session_id"}; the agent is not woken until the next turn ends`);
    else startWaker({ thread, key: sessionKey(env), hostPid: process.ppid }, env);
  } catch (error) {
    note(`internal error: ${(error as Error).message}; the agent is not woken until the next turn ends`);
  }
  process.stdout.write("{}\n");
  return 0;
}

/**
 * Runs the waker until its session ends (a newer waker, the host gone, SIGTERM) or it
 * cannot watch. Resolves to 0 then; notes go to stderr (the log the hook gave it).
 */
export async function runCodexWaker(target: WakerTarget, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const note = (line: string) => process.stderr.write(`${new Date().toISOString()} backchannel hook codex-wake: ${oneLine(line)}\n`);
  for (let first = true; ; first = false) {
    const outcome = await runSessionWatcher({
      timeoutMs: WATCH_SPAN_MS,
      err: note,
      env,
      key: target.key,
      hostPid: target.hostPid,
      onlyWithChannels: first,
    });
    switch (outcome.kind) {
      case "mail": {
        const queued = queueMessage(target, outcome.summary, env);
        note(queued === undefined ? `woke thread ${target.thread}` : `could not wake thread ${target.thread}: ${queued}`);
        break;
      }
      case "timeout":
        break;
      case "ended":
      case "failed":
        note(`${outcome.reason}; stopped`);
        return 0;
    }
  }
}

/**
 * Starts the waker for `target`, detached from the hook (Codex waits for the hook's
 * output, not for its children), its output appended to a log beside the session's
 * claim.
 */
export function startWaker(target: WakerTarget, env: NodeJS.ProcessEnv): void {
  const log = wakerLogFile(resolveDataDir(env), target.key);
  mkdirSync(dirname(log), { recursive: true, mode: FOLDER_MODE });
  const fd = openSync(log, logIsFull(log) ? "w" : "a", FILE_MODE);
  try {
    const args = [CLI_ENTRY, "hook", "codex-wake", "--thread", target.thread, "--session", target.key, "--host-pid", String(target.hostPid)];
    const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", fd, fd], env });
    child.unref();
  } finally {
    closeSync(fd);
  }
}

/** The log of a session's waker: `<data dir>/watchers/<key>.codex-wake.log`. */
export function wakerLogFile(dataDir: string, key: string): string {
  return join(dirname(watcherClaimFile(dataDir, key)), `${key}.codex-wake.log`);
}

/**
 * Queues `summary` for the thread with `codex queue … --resume`, which gives the idle
 * thread a turn. Codex is the host's own executable where it can be read (Linux), else
 * `codex` on the PATH.
 * @returns `undefined` when Codex took the message, else why not.
 */
function queueMessage(target: WakerTarget, summary: string, env: NodeJS.ProcessEnv): string | undefined {
  const codex = hostExecutable(target.hostPid) ?? "codex";
  const result = spawnSync(codex, ["queue", "--thread", target.thread, "--message", summary, "--resume"], {
    env,
    encoding: "utf8",
    timeout: QUEUE_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.error) return `${codex} queue: ${result.error.message}`;
  if (result.status !== 0) return `${codex} queue exited ${result.status}: ${oneLine(result.stderr.trim().split("\n").slice(-3).join(" | "), 400)}`;
  return undefined;
}

/** The executable of process `pid` (Linux: `/proc/<pid>/exe`), or `undefined`. */
function hostExecutable(pid: number): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined;
  }
}

/** The `session_id` of Codex's hook input (the thread's id), or `undefined`. */
function threadOf(text: string): string | undefined {
  const input = JSON.parse(text) as { session_id?: unknown };
  return typeof input.session_id === "string" && /^[\w-]{1,128}$/.test(input.session_id) ? input.session_id : undefined;
}

/** Whether the log at `path` has reached {@link MAX_LOG_BYTES}. */
function logIsFull(path: string): boolean {
  try {
    return statSync(path).size >= MAX_LOG_BYTES;
  } catch {
    return false;
  }
}
