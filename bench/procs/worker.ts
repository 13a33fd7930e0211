/**
 * Queue workers (../workers/queue-worker.ts) as child processes, started once and
 * given one task after another.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { withTimeout } from "../timing.js";
import type { WorkerCommand, WorkerReport, WorkerTask } from "../workers/queue-worker.js";

const WORKER = fileURLToPath(new URL("../workers/queue-worker.js", import.meta.url));
/** Longest a worker may take to start. */
const START_TIMEOUT_MS = 60_000;

/** A running worker. */
export interface WorkerProcess {
  /** Gives the worker `task`; resolves once it has opened its store and can start. @throws when the worker dies first. */
  arm(task: WorkerTask): Promise<void>;
  /** Starts the armed task; resolves with its report. @throws when the worker dies first. */
  go(): Promise<WorkerReport>;
  /** Tells a drainer to finish its task once the queue is empty. */
  stop(): void;
  /** Ends the worker. */
  close(): void;
}

/** Starts `count` workers; resolves once all of them are ready. */
export async function startWorkers(count: number): Promise<WorkerProcess[]> {
  const workers = Array.from({ length: count }, () => startWorker());
  await withTimeout(Promise.all(workers.map((worker) => worker.ready)), START_TIMEOUT_MS, "queue workers to start");
  return workers.map((worker) => worker.process);
}

/**
 * Arms every worker with its task, then starts them all at once, so that the span of a
 * run is the work alone.
 * @returns each worker's report, in the order of `runs`.
 * @throws when a worker dies while arming or takes longer than a minute to arm.
 */
export async function runTogether(runs: readonly { worker: WorkerProcess; task: WorkerTask }[]): Promise<Promise<WorkerReport>[]> {
  await withTimeout(Promise.all(runs.map(({ worker, task }) => worker.arm(task))), START_TIMEOUT_MS, "queue workers to arm");
  return runs.map(({ worker }) => worker.go());
}

/** Writer `writer`'s part of `messages` spread evenly over `processes`; the first writers take the remainder. */
export function share(messages: number, processes: number, writer: number): number {
  return Math.floor(messages / processes) + (writer < messages % processes ? 1 : 0);
}

/** `operations` per second over the span of `reports`, from the earliest start to the latest last operation. */
export function rate(operations: number, reports: readonly WorkerReport[]): number {
  const start = Math.min(...reports.map((report) => report.startedAt));
  const end = Math.max(...reports.map((report) => report.lastAt));
  return end > start ? (operations * 1000) / (end - start) : 0;
}

function startWorker(): { ready: Promise<void>; process: WorkerProcess } {
  const child = spawn(process.execPath, [WORKER], { stdio: ["pipe", "pipe", "pipe"] });
  let buffered = "";
  let stderr = "";
  let exited: Error | undefined;
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      waiting.shift()?.resolve(line);
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.on("exit", (code) => {
    exited = new Error(`queue worker exited ${code}: ${stderr.trim()}`);
    for (const waiter of waiting.splice(0)) waiter.reject(exited);
  });
  const nextLine = () => new Promise<string>((resolve, reject) => (exited ? reject(exited) : waiting.push({ resolve, reject })));
  const send = (command: WorkerCommand) => child.stdin.write(`${JSON.stringify(command)}\n`);
  return {
    ready: nextLine().then(() => undefined),
    process: {
      arm(task) {
        const armed = nextLine().then(() => undefined);
        send({ task });
        return armed;
      },
      go() {
        const report = nextLine().then((line) => JSON.parse(line) as WorkerReport);
        send({ go: true });
        return report;
      },
      stop: () => send({ stop: true }),
      close: () => child.stdin.end(),
    },
  };
}
