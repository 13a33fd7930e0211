/**
 * CPU time spent by a process, for bounds on how much work a step takes that hold on a
 * loaded machine, where wall-clock time measures the machine as much as the code.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's times. */
let ticksPerSecond: number | undefined;

/**
 * The user and system CPU time process `pid` has used so far, in milliseconds (to a
 * clock tick, 10 ms on Linux), or `undefined` where /proc is not there (not Linux).
 */
export function cpuMsOf(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  // Fields after the command name (which may hold spaces, but ends at the last ")"): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** The CPU time this process has used so far, in milliseconds. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
