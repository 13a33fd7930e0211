/**
 * A design's watcher as a real child process, with the moment of every event it
 * shows: armed (its "waiting for messages" note on stderr), each stdout line, exit.
 * Times are `performance.now()` of this process, taken in the event handlers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Design } from "../designs.js";

/** A line the watcher printed and when it was read. */
export interface TimedLine {
  line: string;
  at: number;
}

/** A running watcher. */
export interface WatcherProcess {
  child: ChildProcess;
  /** When it was spawned. */
  spawnedAt: number;
  /** Resolves with the time it said it was waiting for messages. */
  ready: Promise<number>;
  /** Resolves with the exit code and the time the exit was observed. */
  exited: Promise<{ code: number | null; at: number }>;
  /**
   * The next stdout line not yet taken.
   * @throws when none comes within `timeoutMs` or the watcher exits first.
   */
  nextLine(timeoutMs: number): Promise<TimedLine>;
  /** Ends the watcher (SIGTERM) if it still runs. */
  stop(): void;
}

/** Spawns `design`'s watcher of `channelId` on `dataDir`. */
export function spawnWatcher(design: Design, dataDir: string, channelId: string, follow: boolean): WatcherProcess {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, design.watcherArgs(channelId, follow), {
    env: { ...process.env, ...design.env(dataDir) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: TimedLine[] = [];
  let wakeReader: (() => void) | undefined;
  let partial = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const at = performance.now();
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) lines.push({ line, at });
    wakeReader?.();
  });
  let stderr = "";
  const ready = new Promise<number>((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes("waiting for messages")) resolve(performance.now());
    });
    child.on("exit", (code) => reject(new Error(`${design.name} watcher exited (${code}) before it was ready: ${stderr}`)));
  });
  // The harness awaits `ready` in all but the error paths; never let it crash the run there.
  ready.catch(() => undefined);
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => {
    child.on("exit", (code) => {
      resolve({ code, at: performance.now() });
      wakeReader?.();
    });
  });
  return {
    child,
    spawnedAt,
    ready,
    exited,
    async nextLine(timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      while (lines.length === 0) {
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`${design.name} watcher printed no line within ${timeoutMs} ms`);
        if (child.exitCode !== null) throw new Error(`${design.name} watcher exited (${child.exitCode}) without a line`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wakeReader = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeReader = undefined;
      }
      return lines.shift()!;
    },
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}
