/**
 * Figure 4: queue throughput with durable writes, from 1, 4 and 16 processes at once,
 * and the count of lost or duplicated messages, which must be 0.
 *
 * - One queue: K processes append to one empty queue together (the contended case),
 *   up to M messages in all (M <= 1,000, the queue limit) or for T seconds, whichever
 *   comes first. The queue file is then read back: it must hold each appended key
 *   once, in seq order.
 * - A channel each: the same, but each appender on a channel of its own (the usual
 *   case: one writer per queue), so only the disk is shared.
 * - Append + drain: K appenders on one queue while K drainers empty it with
 *   read-and-clear long-polls, as apps read (the baseline cannot wait: its drainers read
 *   again 1 ms after an empty read); every key must reach exactly one drainer.
 *
 * Workers are started once per process count and wait for their tasks, and all workers
 * of a run start together once each has opened its store, so that only the queue work
 * is timed: from the earliest start to the last append (or the last drain that found
 * messages) of any worker. The time cap keeps a slow run short; a
 * faster design then appends more, into a longer queue, which only makes each of its
 * appends dearer.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { Design, DesignName } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import { REDIS_BENCHMARK, redisSetCeiling } from "../procs/redis-benchmark.js";
import type { SoloFigure } from "../solo.js";
import { assertExactlyOnce, type Tally } from "../integrity.js";
import { rate, runTogether, share, startWorkers, type WorkerProcess } from "../procs/worker.js";
import { type DepthPlan, depthFigures } from "./append-depth.js";
import { withTimeout } from "../timing.js";
import { openReader } from "../../store/open.js";
import type { WorkerReport } from "../workers/queue-worker.js";

/** How a throughput run is sized. */
export interface ThroughputPlan {
  /** Process counts to measure. */
  processes: number[];
  /** Most messages per run (at most the queue limit, 1,000). */
  messages: number;
  /** Longest the appenders of one run append. */
  durationMs: number;
  /** Runs per process count and design. */
  repeats: number;
  /** The file store's appends on a queue already holding messages, beside the floor (./append-depth.ts). */
  depth: DepthPlan;
}

/** How much one run appends. */
export type RunSize = Pick<ThroughputPlan, "messages" | "durationMs">;

/** What one run measured. */
export interface ThroughputRun {
  appendsPerSecond: number;
  /** Append + drain only: drain operations that found messages, per second. */
  drainsPerSecond?: number;
  errors: number;
  tally: Tally;
}

/** Longest one run may take before the run fails. */
const RUN_TIMEOUT_MS = 120_000;

/** Most requests redis-benchmark sends for one ceiling: a few seconds at the ceiling of a durable server here. */
const MAX_CEILING_REQUESTS = 20_000;

/**
 * Measures every process count of `plan` for each design; for a design with a store
 * server of its own (redis-server), also that server's own ceiling from as many
 * connections (../procs/redis-benchmark.ts), as a solo figure.
 */
export async function throughputFigures(designs: readonly Design[], plan: ThroughputPlan, ctx: RunContext): Promise<(Figure | SoloFigure)[]> {
  const figures: (Figure | SoloFigure)[] = [];
  const totals = new Map<DesignName, { lost: number; duplicated: number; errors: number }>();
  const count = (design: Design, run: ThroughputRun) => {
    const total = totals.get(design.name) ?? { lost: 0, duplicated: 0, errors: 0 };
    totals.set(design.name, {
      lost: total.lost + run.tally.lost,
      duplicated: total.duplicated + run.tally.duplicated,
      errors: total.errors + run.errors,
    });
    return run;
  };
  for (const processes of plan.processes) {
    const oneQueue = {} as Record<DesignName, number[]>;
    const own = {} as Record<DesignName, number[]>;
    const mixedAppend = {} as Record<DesignName, number[]>;
    const mixedDrain = {} as Record<DesignName, number[]>;
    const appenders = await startWorkers(processes);
    const drainers = await startWorkers(processes);
    try {
      for (const design of designs) {
        ctx.log(`throughput: ${design.name}, ${processes} process(es)`);
        oneQueue[design.name] = [];
        own[design.name] = [];
        mixedAppend[design.name] = [];
        mixedDrain[design.name] = [];
        for (let repeat = 0; repeat < plan.repeats; repeat += 1) {
          oneQueue[design.name]!.push(count(design, await fillQueue(design, appenders, plan, ctx)).appendsPerSecond);
          if (processes > 1) {
            own[design.name]!.push(count(design, await fillQueue(design, appenders, plan, ctx, { ownChannels: true })).appendsPerSecond);
          }
          const mixed = count(design, await appendAndDrain(design, appenders, drainers, plan, ctx));
          mixedAppend[design.name]!.push(mixed.appendsPerSecond);
          mixedDrain[design.name]!.push(mixed.drainsPerSecond ?? 0);
        }
      }
    } finally {
      for (const worker of [...appenders, ...drainers]) worker.close();
    }
    const label = `${processes} proc${processes === 1 ? "" : "s"}`;
    figures.push(...(await storeCeilings(designs, processes, plan.repeats, label, ctx)));
    figures.push({
      key: `throughput.append.${processes}`,
      name: `appends/s, ${label} on one queue`,
      unit: "/s",
      better: "higher",
      samples: oneQueue,
    });
    if (processes > 1) {
      figures.push({
        key: `throughput.ownChannels.${processes}`,
        name: `appends/s, ${label}, a channel each`,
        unit: "/s",
        better: "higher",
        samples: own,
      });
    }
    figures.push(
      {
        key: `throughput.mixedAppend.${processes}`,
        name: `appends/s, ${label} + ${label} draining`,
        unit: "/s",
        better: "higher",
        samples: mixedAppend,
      },
      {
        key: `throughput.mixedDrain.${processes}`,
        name: `drains/s, ${label} + ${label} draining`,
        unit: "/s",
        better: "higher",
        samples: mixedDrain,
      },
    );
  }
  const fileStore = designs.find((design) => design.name === "backchannel");
  if (fileStore) {
    const workers = await startWorkers(Math.max(...plan.depth.processes));
    try {
      figures.push(...(await depthFigures(fileStore, workers, plan.depth, ctx)));
    } finally {
      for (const worker of workers) worker.close();
    }
  }
  const total = (field: "lost" | "duplicated" | "errors") =>
    Object.fromEntries(designs.map((design) => [design.name, [totals.get(design.name)?.[field] ?? 0]])) as Record<DesignName, number[]>;
  figures.push(
    { key: "throughput.lost", name: "messages lost, all throughput runs", unit: "msgs", better: "lower", samples: total("lost") },
    { key: "throughput.duplicated", name: "messages duplicated, all throughput runs", unit: "msgs", better: "lower", samples: total("duplicated") },
    { key: "throughput.errors", name: "appends or drains refused (lock timeout)", unit: "calls", better: "lower", samples: total("errors") },
  );
  return figures;
}

/** Where a fill run writes. */
export interface FillOptions {
  /** An existing data directory (the scale suite's); default: a new one. */
  dataDir?: string;
  /** Each appender on a channel of its own, rather than all on one queue. */
  ownChannels?: boolean;
}

/**
 * The `appenders` fill empty queues, then the queues are read back.
 * @throws DeliveryError when a key is missing or repeated, Error when seqs are out of order.
 */
export async function fillQueue(
  design: Design,
  appenders: WorkerProcess[],
  size: RunSize,
  ctx: RunContext,
  options: FillOptions = {},
): Promise<ThroughputRun> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(ctx.root, `${design.name}-fill-`)));
  const base = `bench-fill-${appenders.length}-${Math.random().toString(36).slice(2, 8)}`;
  const channelIds = appenders.map((_, writer) => (options.ownChannels ? `${base}-${writer}` : base));
  const runs = appenders.map((worker, writer) => ({
    worker,
    task: {
      design: design.name,
      location: design.location(dataDir),
      channelId: channelIds[writer]!,
      role: "append" as const,
      writer,
      count: options.ownChannels ? size.messages : share(size.messages, appenders.length, writer),
      durationMs: size.durationMs,
      replicas: design.redisReplicas,
    },
  }));
  const reports = await withTimeout(Promise.all(await runTogether(runs)), RUN_TIMEOUT_MS, `${design.name} appenders`);
  const stored: string[] = [];
  const { reader, close } = await openReader(design.location(dataDir));
  try {
    for (const channelId of new Set(channelIds)) {
      const messages = await reader.peek(channelId, "agent");
      messages.forEach((message, index) => {
        if (index > 0 && message.seq <= messages[index - 1]!.seq) throw new Error(`${design.name}: seq ${message.seq} out of order in ${channelId}`);
      });
      stored.push(...messages.map((message) => keyOf(message.data)));
    }
  } finally {
    await close();
  }
  const written = reports.flatMap((report) => report.keys);
  const tally = assertExactlyOnce(`${design.name} fill, ${appenders.length} processes`, written, stored);
  return { appendsPerSecond: rate(written.length, reports), errors: errorCount(reports), tally };
}

/** For each design with a store server of its own: that server's plain SETs/s from `clients` connections. */
async function storeCeilings(designs: readonly Design[], clients: number, repeats: number, label: string, ctx: RunContext): Promise<SoloFigure[]> {
  const figures: SoloFigure[] = [];
  for (const design of designs) {
    if (design.storeServerPort === undefined) continue;
    ctx.log(`throughput: ${design.name}-server's own ceiling, ${clients} connection(s)`);
    const samples: number[] = [];
    for (let repeat = 0; repeat < repeats; repeat += 1) {
      const rate = await redisSetCeiling(design.storeServerPort, clients, Math.min(MAX_CEILING_REQUESTS, 2500 * clients));
      if (rate === undefined) {
        ctx.log(`throughput: ${REDIS_BENCHMARK} is not installed (apt-get install redis-tools): no ceiling`);
        return figures;
      }
      samples.push(rate);
    }
    figures.push({
      key: `throughput.storeCeiling.${clients}`,
      name: `${design.name}-server's own ceiling: plain SETs/s from ${clients} connection${clients === 1 ? "" : "s"} (redis-benchmark)`,
      unit: "/s",
      solo: true,
      samples,
      against: { name: `${design.name}: appends/s, ${label} on one queue, main table` },
    });
  }
  return figures;
}

/** The `appenders` append to one queue while the `drainers` empty it. */
async function appendAndDrain(
  design: Design,
  appenders: WorkerProcess[],
  drainers: WorkerProcess[],
  size: RunSize,
  ctx: RunContext,
): Promise<ThroughputRun> {
  const dataDir = await mkdtemp(join(ctx.root, `${design.name}-mixed-`));
  const task = {
    design: design.name,
    location: design.location(dataDir),
    channelId: `bench-mixed-${Math.random().toString(36).slice(2, 8)}`,
    durationMs: size.durationMs,
  };
  const reports = await runTogether([
    ...drainers.map((worker, writer) => ({ worker, task: { ...task, role: "drain" as const, writer, count: 0 } })),
    ...appenders.map((worker, writer) => ({
      worker,
      task: { ...task, role: "append" as const, writer, count: share(size.messages, appenders.length, writer) },
    })),
  ]);
  const drained = reports.slice(0, drainers.length);
  const appended = await withTimeout(Promise.all(reports.slice(drainers.length)), RUN_TIMEOUT_MS, `${design.name} appenders`);
  for (const worker of drainers) worker.stop();
  const drainReports = await withTimeout(Promise.all(drained), RUN_TIMEOUT_MS, `${design.name} drainers`);
  const tally = assertExactlyOnce(
    `${design.name} append + drain, ${appenders.length} + ${drainers.length} processes`,
    appended.flatMap((report) => report.keys),
    drainReports.flatMap((report) => report.keys),
  );
  return {
    appendsPerSecond: rate(sum(appended.map((report) => report.operations)), appended),
    drainsPerSecond: rate(sum(drainReports.map((report) => report.operations)), drainReports),
    errors: errorCount([...appended, ...drainReports]),
    tally,
  };
}

function errorCount(reports: WorkerReport[]): number {
  return sum(reports.map((report) => report.errors.length));
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function keyOf(data: unknown): string {
  return String((data as { key?: unknown } | null)?.key);
}
