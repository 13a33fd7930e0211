/**
 * The machine a run measured, so that every table names it.
 */
import { cpus, freemem, platform, release, totalmem } from "node:os";
import { statfsSync } from "node:fs";

/** What the results depend on. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  os: string;
  node: string;
  /** The file system type of the data directories (tmpfs would hide fsync's cost). */
  tempFsType: string;
}

/** Describes this machine; `tempDir` is where the data directories live. */
export function describeMachine(tempDir: string): Machine {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? "unknown",
    cores: cpu.length,
    memoryGiB: round(totalmem() / 2 ** 30),
    freeMemoryGiB: round(freemem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    tempFsType: fsTypeName(statfsSync(tempDir).type),
  };
}

/** One line: "2 × AMD EPYC, 7.8 GiB, linux 6.1, node v20.20.2, data on ext2/3/4". */
export function machineLine(machine: Machine): string {
  return `${machine.cores} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}, node ${machine.node}, data on ${machine.tempFsType}`;
}

function fsTypeName(magic: number): string {
  const names: Record<number, string> = { 61267: "ext2/3/4", 16914836: "tmpfs", 1481003842: "xfs", 2435016766: "btrfs", 2035054128: "overlayfs" };
  return names[magic] ?? `fs 0x${magic.toString(16)}`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
