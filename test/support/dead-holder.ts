/**
 * The record a lock holder writes (see core/fs/lock.ts), for a process that has
 * already exited: what a holder killed while it held the lock leaves behind.
 */
import { spawnSync } from "node:child_process";
import { readFile, readlink } from "node:fs/promises";

/** A lock record of a process that ran on this machine and is gone, and that process's pid. */
export async function deadHolderRecord(): Promise<{ pid: number; record: string }> {
  const gone = spawnSync(
    process.execPath,
    ["-p", "JSON.stringify({ pid: process.pid, stat: require('fs').readFileSync('/proc/self/stat', 'utf8') })"],
    { encoding: "utf8" },
  );
  const { pid, stat } = JSON.parse(gone.stdout) as { pid: number; stat: string };
  const machine = `${(await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim()} ${await readlink("/proc/self/ns/pid")}`;
  const started = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return { pid, record: JSON.stringify({ pid, machine, started, nonce: "0", beat: 0 }) };
}
