/**
 * Which host session a process belongs to, found the same way by every process of the
 * session (the MCP server, the status line, the hooks, the session watcher the model
 * runs), so that they agree without any configuration.
 *
 * The session is its host's main process: Claude Code names it in `CLAUDE_PID` for the
 * status line, hooks and the commands the model runs, but not for MCP servers, which
 * find it as their topmost ancestor named `claude` (Claude Code runs intermediate
 * `claude` processes between the two). Claude Code's own session id cannot serve: the
 * status line and hooks get a new one on `/clear` while the MCP server keeps the one it
 * was started with (docs/ARCHITECTURE.md, "The session key").
 *
 * Invariant: a key never repeats. A pid does, across the sessions of one machine, and
 * across machines, containers and users sharing a store, so the key is the pid with a
 * digest of everything that tells that process apart: the machine's boot id and pid
 * namespace, the process's start time, and the user. Where the start time cannot be
 * read (Windows), the key repeats as that machine's pids do.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename } from "node:path";
import { machineIdentity, procStat } from "./process-info.js";

/** How far up the process tree the walk goes before it gives up. */
const MAX_DEPTH = 32;

/** One process as the walk sees it. */
interface ProcessEntry {
  ppid: number;
  names: string[];
  /** When it started, in the platform's own words; `null` when unknown. */
  started: string | null;
}

/** What names a host session: its main process (Claude Code's, `claude`) or, outside Claude Code, the parent (`pid`). */
export type SessionHostKind = "claude" | "pid";

/**
 * The session key of this process, `<kind>-<pid>-<20 hex digits>`, for its host process:
 * 1. `CLAUDE_PID` when it is set (Claude Code sets it for the status line, hooks and
 *    the commands the model runs);
 * 2. else the topmost ancestor named `claude`, at most 32 levels up (read from `/proc`
 *    on Linux, from one `ps` call elsewhere; an MCP server's way);
 * 3. else the parent, as `pid-…`.
 * Never throws: a process table that cannot be read leads to the fallback.
 */
export function sessionKey(env: NodeJS.ProcessEnv = process.env): string {
  const lookup = processLookup();
  const claudePid = Number(env.CLAUDE_PID);
  if (Number.isSafeInteger(claudePid) && claudePid > 1) return keyFor("claude", claudePid, lookup(claudePid)?.started ?? null);
  const claude = topmostAncestorNamed("claude", process.ppid, lookup);
  if (claude !== undefined) return keyFor("claude", claude.pid, claude.started);
  return keyFor("pid", process.ppid, lookup(process.ppid)?.started ?? null);
}

let current: string | undefined;

/**
 * {@link sessionKey} of this process, found once: the walk up the process table runs at
 * most once per process, however many servers (one per HTTP request) ask.
 */
export function currentSessionKey(): string {
  current ??= sessionKey();
  return current;
}

/**
 * The session key of host process `pid` (which must run, for its start time to count) as
 * this process and every other process of its session on this machine, as this user, find it.
 */
export function sessionKeyOfProcess(kind: SessionHostKind, pid: number): string {
  return keyFor(kind, pid, processLookup()(pid)?.started ?? null);
}

/** The pid a session key names: the host process whose end ends a session watcher; `undefined` for none. */
export function sessionHostPid(key: string): number | undefined {
  const pid = Number(key.split("-")[1]);
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
}

/** `<kind>-<pid>-<digest>`: the digest of what tells this process apart from every other that had its pid. */
function keyFor(kind: SessionHostKind, pid: number, started: string | null): string {
  const machine = machineIdentity() ?? `host ${hostname()}`;
  const user = process.geteuid?.() ?? "";
  const digest = createHash("sha256")
    .update(JSON.stringify([machine, user, pid, started]))
    .digest("hex")
    .slice(0, 20);
  return `${kind}-${pid}-${digest}`;
}

/** The topmost process named `name` among `start` and its ancestors, or `undefined`. */
function topmostAncestorNamed(
  name: string,
  start: number,
  lookup: (pid: number) => ProcessEntry | undefined,
): { pid: number; started: string | null } | undefined {
  let found: { pid: number; started: string | null } | undefined;
  let pid = start;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    const entry = lookup(pid);
    if (!entry) break;
    if (entry.names.includes(name)) found = { pid, started: entry.started };
    pid = entry.ppid;
  }
  return found;
}

/** A function that describes one process: from `/proc` where there is one, else from a single `ps` listing. */
function processLookup(): (pid: number) => ProcessEntry | undefined {
  if (process.platform === "linux") return readProcEntry;
  if (process.platform === "win32") return () => undefined;
  const table = new Map<number, ProcessEntry>();
  try {
    // lstart is fixed-width ("Tue Dec  3 17:16:00 2024") in the C locale.
    const listing = execFileSync("ps", ["-A", "-o", "pid=,ppid=,lstart=,comm="], {
      encoding: "utf8",
      timeout: 2000,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, LC_ALL: "C" },
    });
    for (const line of listing.split("\n")) {
      const match = /^\s*(\d+)\s+(\d+)\s+(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4})\s+(.*)$/.exec(line);
      if (match) table.set(Number(match[1]), { ppid: Number(match[2]), started: match[3]!, names: [basename(match[4]!.trim())] });
    }
  } catch {
    // No ps: the caller falls back to the parent.
  }
  return (pid) => table.get(pid);
}

/** A process from `/proc/<pid>`: its parent, start time and two names, `comm` and the base name of `argv[0]`. */
function readProcEntry(pid: number): ProcessEntry | undefined {
  const stat = procStat(pid);
  if (!stat) return undefined;
  let argv0 = "";
  try {
    argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
  } catch {
    // Gone meanwhile: its comm still names it.
  }
  return { ppid: stat.ppid, names: [stat.comm, basename(argv0)], started: stat.started };
}
