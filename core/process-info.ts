/**
 * What this machine and its processes say about themselves, read from `/proc` on Linux:
 * enough to tell one process from another that later got the same pid, and one machine
 * or container from another (the lock's holder record, core/fs/lock.ts; the session
 * key, ./session-key.ts), and how a host process was started (the wake hook,
 * claude-code/stop-hook.ts). Elsewhere each answer is `null`, and callers say what they
 * do without it.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";

/** One process as `/proc/<pid>/stat` describes it. */
export interface ProcStat {
  /** Its state letter (`R`, `S`, `Z` a zombie, `X` dead, …). */
  state: string;
  ppid: number;
  /** Its command name (`comm`: what `process.title` and `prctl` set). */
  comm: string;
  /** When it started, in clock ticks since boot (field 22), as written: with the boot id, no two processes share it and a pid. */
  started: string;
}

/**
 * Process `pid` from `/proc/<pid>/stat`.
 * @returns `null` when there is no such process or no `/proc`.
 */
export function procStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so fields are counted after the last ")".
  const close = text.lastIndexOf(")");
  const fields = text.slice(close + 2).split(" ");
  const ppid = Number(fields[1]);
  if (fields.length <= 19 || !Number.isSafeInteger(ppid)) return null;
  return { state: fields[0]!, ppid, comm: text.slice(text.indexOf("(") + 1, close), started: fields[19]! };
}

let machine: { id: string | null } | undefined;

/**
 * This machine's boot and this process's pid namespace (`<boot id> pid:[<inode>]`), read
 * once: two processes with the same pid and start time are the same process only when
 * this is the same too (containers share a boot id, not a pid namespace).
 * @returns `null` off Linux.
 */
export function machineIdentity(): string | null {
  if (!machine) {
    let id: string | null = null;
    try {
      id = `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()} ${readlinkSync("/proc/self/ns/pid")}`;
    } catch {
      // Not Linux.
    }
    machine = { id };
  }
  return machine.id;
}

/**
 * The command line of process `pid`, its program first: exact from `/proc/<pid>/cmdline`
 * on Linux; elsewhere but Windows from `ps -ww -o args=`, split at white space (an
 * argument that holds spaces comes back in pieces).
 * @returns `null` when the process is gone or its command line cannot be read (Windows).
 */
export function processArguments(pid: number): string[] | null {
  if (process.platform === "linux") {
    try {
      const text = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      return text === "" ? null : text.replace(/\0$/, "").split("\0");
    } catch {
      return null;
    }
  }
  if (process.platform === "win32") return null;
  try {
    const line = execFileSync("ps", ["-ww", "-o", "args=", "-p", String(pid)], {
      encoding: "utf8",
      timeout: 2000,
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return line === "" ? null : line.split(/\s+/);
  } catch {
    return null;
  }
}
