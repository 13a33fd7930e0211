/**
 * Processes a test started that outlived it: hosts start daemons, MCP servers and hooks
 * that detach (Codex's app-server daemon and its pid-update loop, backchannel's waker,
 * an AfterAgent hook Gemini CLI left running when it was killed). They are found by a
 * marker only they carry (a temporary folder of the test's in their command line or
 * environment, never a program's name) and ended by pid.
 */
import { readdir, readFile } from "node:fs/promises";
import { waitUntil } from "./helpers.js";

/**
 * The pids of the processes (this one excepted) whose command line or environment holds
 * `marker`, and whose arguments include every one of `words` (none: any).
 */
export async function processesMarked(marker: string, ...words: string[]): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    if (!cmdline.includes(marker) && !environ.includes(marker)) continue;
    const args = cmdline.split("\0");
    if (words.every((word) => args.includes(word))) found.push(Number(name));
  }
  return found;
}

/** Ends the processes marked with `marker` (SIGTERM, then SIGKILL after 3 s); the pids it found. */
export async function endProcessesMarked(marker: string): Promise<number[]> {
  const pids = await processesMarked(marker);
  await endProcesses(pids, pids);
  return pids;
}

/**
 * Sends SIGTERM to each of `targets` (pids, or a process group as `-pgid`), waits up to
 * 3 s for every one of `watched` to end, then sends SIGKILL to the targets if any is left.
 */
export async function endProcesses(targets: number[], watched: number[]): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    for (const target of targets) {
      try {
        process.kill(target, name);
      } catch {
        // gone already
      }
    }
  };
  signal("SIGTERM");
  await waitUntil(() => !watched.some(alive), "the processes gone after SIGTERM", { timeoutMs: 3_000 }).catch(() => signal("SIGKILL"));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
