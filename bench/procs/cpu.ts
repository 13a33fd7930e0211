/**
 * CPU time of another process, from Linux's /proc: the scheduler's own count of the
 * nanoseconds each thread ran (/proc/<pid>/task/<tid>/schedstat), summed over the
 * process's threads (the main thread, libuv's pool, V8's helpers). Unlike utime and
 * stime, which are sampled at 100 Hz, it is exact for a process that wakes for a
 * fraction of a millisecond now and then — which is what an idle process does.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The CPU time `pid` has used so far, in ms; `undefined` where /proc is missing or the process is gone. */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    let nanoseconds = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    }
    return nanoseconds / 1e6;
  } catch {
    return undefined;
  }
}
