/**
 * A pid namespace of its own (a container's process table), in which a test chooses the
 * pid the next process gets: for tests of what must hold when pids repeat, across the
 * sessions of one machine or across containers. Made with util-linux's `unshare` (a
 * `sleep` is its first process, pid 1) and entered with `nsenter`; the next pid is set
 * through the namespace's own `/proc/sys/kernel/ns_last_pid`, where nothing else forks
 * meanwhile. Needs root on Linux.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Why the pid-namespace tests cannot run here, or `false` when they can. @throws under `CI` when they cannot: CI must run them. */
export function pidNamespaceSkip(): string | false {
  let reason: string | false = false;
  if (process.platform !== "linux" || process.getuid?.() !== 0) reason = "needs root on Linux to make a pid namespace";
  else {
    try {
      execFileSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" });
    } catch {
      reason = "unshare (util-linux) cannot make a pid namespace here";
    }
  }
  if (reason && process.env.CI) throw new Error(`${reason}; CI is set, so the pid-namespace tests must run`);
  if (reason) process.stderr.write(`\n*** SKIPPING the pid-namespace tests: ${reason}. They run, and must pass, in CI (as root). ***\n\n`);
  return reason;
}

/** A running pid namespace. */
export interface PidNamespace {
  /** The command line that runs `command` inside the namespace (its own /proc mounted). */
  command(command: string[]): string[];
  /**
   * Starts `command` inside with pid `pid` (above 1, and free), and resolves once it runs
   * there with that pid. Start nothing else inside meanwhile.
   * @returns the `nsenter` process outside, which ends when `command` ends.
   */
  startAt(pid: number, command: string[]): Promise<ChildProcess>;
  /** Ends every process inside. */
  close(): Promise<void>;
}

/** Makes a pid namespace with a `sleep` as its first process. */
export async function makePidNamespace(): Promise<PidNamespace> {
  const keeper: ChildProcess = spawn("unshare", ["--pid", "--fork", "--mount-proc", "sleep", "3600"], { stdio: "ignore" });
  const exited = new Promise((resolve) => keeper.once("exit", resolve));
  let init: number | undefined;
  for (let tries = 0; init === undefined && tries < 200; tries++) {
    init = readChildren(keeper.pid!)[0];
    if (init === undefined) await sleep(10);
  }
  if (init === undefined) {
    keeper.kill("SIGKILL");
    throw new Error("unshare started no process");
  }
  const command = (args: string[]) => ["nsenter", `--target=${init}`, "--pid", "--mount", "--", ...args];
  const nextPid = (pid: number) => {
    const [file, ...args] = command(["sh", "-c", `echo ${pid - 1} > /proc/sys/kernel/ns_last_pid`]);
    execFileSync(file!, args);
  };
  return {
    command,
    async startAt(pid: number, args: string[]) {
      nextPid(pid);
      const [file, ...rest] = command(args);
      const outside = spawn(file!, rest, { stdio: "ignore" });
      // nsenter forks the process that enters the namespace: its last NSpid is its pid inside.
      for (let tries = 0; tries < 500; tries++) {
        const forked = readChildren(outside.pid!)[0];
        const inside = forked === undefined ? undefined : /^NSpid:.*\s(\d+)$/m.exec(readOrEmpty(`/proc/${forked}/status`))?.[1];
        if (inside !== undefined) {
          if (Number(inside) === pid) return outside;
          outside.kill("SIGKILL");
          throw new Error(`the process started in the namespace got pid ${inside}, not ${pid}`);
        }
        await sleep(10);
      }
      outside.kill("SIGKILL");
      throw new Error("nsenter started no process within 5 s");
    },
    async close() {
      // The first process of a pid namespace takes every other with it when it ends.
      process.kill(init, "SIGKILL");
      await exited;
    },
  };
}

/** The pids of the children of process `pid` (its main thread's). */
function readChildren(pid: number): number[] {
  return readOrEmpty(`/proc/${pid}/task/${pid}/children`)
    .split(" ")
    .filter((word) => word.length > 0)
    .map(Number);
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
