/**
 * Many processes released at the same moment (test/fixtures/start-barrier.ts), so that
 * their start-up times do not stagger them and hide a race between them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { mkfifo } from "./fifo.js";

/** The preload that holds each process at the start line until all are ready. */
const BARRIER = fileURLToPath(new URL("../fixtures/start-barrier.js", import.meta.url));

/** How one of the processes ended. */
export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <argv>` for each of `runs` with `env`, all released at once once every one is
 * ready; `fifo` is a path for the start line's named pipe (made here).
 * @returns their outcomes, in the order of `runs`.
 */
export async function runAtOnce(runs: string[][], env: NodeJS.ProcessEnv, fifo: string): Promise<Outcome[]> {
  await mkfifo(fifo);
  const started = runs.map((argv) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", BARRIER, ...argv], { env: { ...env, BARRIER_FIFO: fifo } });
    let stdout = "";
    let stderr = "";
    const ready = new Promise<void>((resolve) =>
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("barrier: ready\n")) resolve();
      }),
    );
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<Outcome>((resolve) =>
      child.on("close", (code) => resolve({ code, stdout, stderr: stderr.replace("barrier: ready\n", "") })),
    );
    return { ready, exited };
  });
  await Promise.all(started.map((run) => run.ready));
  // One byte per process; the pipe stays open until all have exited, so none can miss its byte.
  const start = await open(fifo, "w");
  try {
    await start.write(Buffer.alloc(runs.length, 1));
    return await Promise.all(started.map((run) => run.exited));
  } finally {
    await start.close();
  }
}
