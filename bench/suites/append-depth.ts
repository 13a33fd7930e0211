/**
 * Part of figure 4: the file store's appends per second on one queue that already holds
 * 1, 100 or 1,000 messages, from 1 and 4 processes, beside the physical floor measured
 * in the same run: the same processes appending lines of the same size to one bare file
 * with O_APPEND and fdatasync, one by one (../workers/queue-worker.ts `appendToFloor`).
 * An append whose work grows with the queue shows as a rate that falls with the depth.
 * Beside them, the same bare loop with each write under the queue's lock
 * (core/fs/lock.ts): what the lock alone leaves of the floor, read against it too.
 *
 * Each run fills a fresh queue to its depth first (untimed, all workers at once), then
 * times its appenders as the one-queue run of ./throughput.ts does, up to `messages` in
 * all or for `durationMs`, so the queue holds between its depth and its depth plus
 * `messages` while timed. The appended messages are then read back: each once, in seq
 * order. The queue's message limit is raised above 1,000 for this.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { Design } from "../designs.js";
import type { RunContext } from "../figures.js";
import { assertExactlyOnce } from "../integrity.js";
import { rate, runTogether, share, type WorkerProcess } from "../procs/worker.js";
import type { SoloFigure } from "../solo.js";
import { withTimeout } from "../timing.js";
import { openReader } from "../../store/open.js";
import type { WorkerReport } from "../workers/queue-worker.js";

/** How the depth runs are sized. */
export interface DepthPlan {
  /** How many messages the queue holds before the timed appends. */
  queued: number[];
  /** Process counts to measure (each at most the workers started). */
  processes: number[];
  /** Most messages appended per timed run. */
  messages: number;
  /** Longest a timed run appends. */
  durationMs: number;
  /** Runs per depth, process count and the floor. */
  repeats: number;
}

/** Longest one run may take before the run fails. */
const RUN_TIMEOUT_MS = 180_000;
/** Writer numbers of the fill, apart from the timed appenders' (0, 1, …). */
const FILL_WRITER = 1000;

/**
 * Measures `plan` for `design` (the file store's) with the first workers of `workers`,
 * and the floor beside it.
 * @returns one solo figure per process count and depth, each against the floor of as many processes.
 */
export async function depthFigures(design: Design, workers: WorkerProcess[], plan: DepthPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const figures: SoloFigure[] = [];
  for (const processes of plan.processes) {
    const appenders = workers.slice(0, processes);
    const floor: number[] = [];
    const lockedFloor: number[] = [];
    const byDepth = new Map<number, number[]>(plan.queued.map((queued) => [queued, []]));
    // Floor and depths alternate within each repeat, so that a change of the machine's load touches them alike.
    for (let repeat = 0; repeat < plan.repeats; repeat += 1) {
      ctx.log(`throughput: the floor and ${design.name} at depths ${plan.queued.join(", ")}, ${processes} process(es), run ${repeat + 1}`);
      floor.push(await floorRun(design, appenders, plan, ctx, "floor"));
      lockedFloor.push(await floorRun(design, appenders, plan, ctx, "locked-floor"));
      for (const queued of plan.queued) byDepth.get(queued)!.push(await depthRun(design, workers, appenders, queued, plan, ctx));
    }
    const label = `${processes} proc${processes === 1 ? "" : "s"}`;
    const against = { name: `bare append + fdatasync loop, ${label} on one file`, samples: floor };
    figures.push({
      key: `throughput.depth.${processes}.locked-floor`,
      name: `the same bare loop with each write under the queue's lock (core/fs/lock.ts), ${label}`,
      unit: "/s",
      solo: true,
      samples: lockedFloor,
      against,
    });
    for (const queued of plan.queued) {
      figures.push({
        key: `throughput.depth.${processes}.${queued}`,
        name: `${design.name} (file store): appends/s, ${label} on one queue holding ${queued.toLocaleString("en")}`,
        unit: "/s",
        solo: true,
        samples: byDepth.get(queued)!,
        against,
      });
    }
  }
  return figures;
}

/** The floor: `appenders` append and fdatasync lines to one bare file, each write under the queue's lock when `role` says so. */
async function floorRun(
  design: Design,
  appenders: WorkerProcess[],
  plan: DepthPlan,
  ctx: RunContext,
  role: "floor" | "locked-floor",
): Promise<number> {
  const dataDir = await mkdtemp(join(ctx.root, `${role}-`));
  const runs = appenders.map((worker, writer) => ({
    worker,
    task: {
      design: design.name,
      location: { kind: "file" as const, dataDir },
      channelId: "floor",
      role,
      writer,
      count: share(plan.messages, appenders.length, writer),
      durationMs: plan.durationMs,
    },
  }));
  const reports = await withTimeout(Promise.all(await runTogether(runs)), RUN_TIMEOUT_MS, "floor appenders");
  return counted(reports, role === "floor" ? "the floor" : "the locked floor");
}

/** Fills a fresh queue to `queued` messages with all `workers`, then times `appenders` on it. */
async function depthRun(
  design: Design,
  workers: WorkerProcess[],
  appenders: WorkerProcess[],
  queued: number,
  plan: DepthPlan,
  ctx: RunContext,
): Promise<number> {
  const dataDir = await mkdtemp(join(ctx.root, `${design.name}-depth-`));
  const limits = { maxQueueMessages: queued + plan.messages };
  const base = { design: design.name, location: design.location(dataDir), channelId: `bench-depth-${queued}`, role: "append" as const, limits };
  const fill = workers.map((worker, index) => ({
    worker,
    task: { ...base, writer: FILL_WRITER + index, count: share(queued, workers.length, index), durationMs: RUN_TIMEOUT_MS },
  }));
  counted(await withTimeout(Promise.all(await runTogether(fill)), RUN_TIMEOUT_MS, `${design.name} fill to ${queued}`), "the fill");
  const timed = appenders.map((worker, writer) => ({
    worker,
    task: { ...base, writer, count: share(plan.messages, appenders.length, writer), durationMs: plan.durationMs },
  }));
  const reports = await withTimeout(Promise.all(await runTogether(timed)), RUN_TIMEOUT_MS, `${design.name} appenders at ${queued}`);
  const { reader, close } = await openReader(design.location(dataDir));
  try {
    const messages = await reader.peek(base.channelId, "agent");
    messages.forEach((message, index) => {
      if (index > 0 && message.seq <= messages[index - 1]!.seq) throw new Error(`${design.name}: seq ${message.seq} out of order at depth ${queued}`);
    });
    const stored = messages
      .map((message) => String((message.data as { key?: unknown }).key))
      .filter((key) => Number(key.split(":")[0]) < FILL_WRITER);
    assertExactlyOnce(
      `${design.name} at depth ${queued}, ${appenders.length} processes`,
      reports.flatMap((report) => report.keys),
      stored,
    );
  } finally {
    await close();
  }
  return counted(reports, `${design.name} at depth ${queued}`);
}

/**
 * The appends per second of `reports`.
 * @throws Error when an append failed (`what` names the run): a refused append would make the rate a lie.
 */
function counted(reports: WorkerReport[], what: string): number {
  const errors = reports.flatMap((report) => report.errors);
  if (errors.length > 0) throw new Error(`${what}: ${errors.length} append(s) failed, the first: ${errors[0]}`);
  return rate(
    reports.reduce((total, report) => total + report.operations, 0),
    reports,
  );
}
