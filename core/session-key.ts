/**
 * Which host session a process belongs to, found the same way by the MCP server and by
 * the status line command, so that the two agree without any configuration.
 *
 * Claude Code runs intermediate `claude` processes between its main process and the
 * MCP servers it starts, and runs the status line command through a shell, so neither
 * process's parent is the main process. Both descend from it, though: the key is the
 * topmost ancestor named `claude` (docs/ARCHITECTURE.md, "The session key").
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

/** How far up the process tree the walk goes before it gives up. */
const MAX_DEPTH = 32;

/** One process as the walk sees it. */
interface ProcessEntry {
  ppid: number;
  names: string[];
}

/**
 * The session key of this process:
 * 1. `claude-<CLAUDE_PID>` when `CLAUDE_PID` is set (Claude Code sets it for Bash,
 *    hooks and MCP servers);
 * 2. else `claude-<pid>` of the topmost ancestor named `claude`, at most 32 levels up
 *    (read from `/proc` on Linux, from one `ps` call elsewhere);
 * 3. else `pid-<parent pid>`.
 * Never throws: a process table that cannot be read leads to the fallback.
 */
export function sessionKey(env: NodeJS.ProcessEnv = process.env): string {
  const claudePid = Number(env.CLAUDE_PID);
  if (Number.isSafeInteger(claudePid) && claudePid > 1) return `claude-${claudePid}`;
  const claude = topmostAncestorNamed("claude", process.ppid);
  return claude === undefined ? `pid-${process.ppid}` : `claude-${claude}`;
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

/** The pid of the topmost process named `name` among `start` and its ancestors, or `undefined`. */
function topmostAncestorNamed(name: string, start: number): number | undefined {
  const lookup = processLookup();
  let found: number | undefined;
  let pid = start;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    const entry = lookup(pid);
    if (!entry) break;
    if (entry.names.includes(name)) found = pid;
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
    const listing = execFileSync("ps", ["-A", "-o", "pid=,ppid=,comm="], { encoding: "utf8", timeout: 2000, stdio: ["ignore", "pipe", "ignore"] });
    for (const line of listing.split("\n")) {
      const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
      if (match) table.set(Number(match[1]), { ppid: Number(match[2]), names: [basename(match[3]!.trim())] });
    }
  } catch {
    // No ps: the caller falls back to the parent.
  }
  return (pid) => table.get(pid);
}

/**
 * A process from `/proc/<pid>`: its parent from `stat` and two names, `comm` (what
 * `process.title` and `prctl` set) and the base name of `argv[0]`.
 */
function readProcEntry(pid: number): ProcessEntry | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so parse after the last ")".
    const close = stat.lastIndexOf(")");
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return Number.isSafeInteger(ppid) ? { ppid, names: [comm, basename(argv0)] } : undefined;
  } catch {
    return undefined;
  }
}
