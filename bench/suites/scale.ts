/**
 * Figure 6: does anything slow down when the data directory holds many channels? With
 * 1, 100 and 10,000 idle channels present besides the few being measured (each with
 * its two queue files, made before the measurement), each design is measured for:
 * - server start: spawn → initialize answered (backchannel sweeps idle channels at start);
 * - delivery latency, as in ./delivery.ts;
 * - appends/s from 4 processes filling a queue, as in ./throughput.ts.
 * Both designs share one data directory per size, grown from one size to the next.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { Design, DesignName } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import { startServer } from "../procs/server.js";
import { channelDir, queueFile } from "../../core/paths.js";
import { measureDelivery } from "./delivery.js";
import { startWorkers, type WorkerProcess } from "../procs/worker.js";
import { fillQueue, type RunSize } from "./throughput.js";

/** How the scale suite is sized. */
export interface ScalePlan {
  /** Channel counts to measure. */
  channels: number[];
  starts: number;
  deliveries: number;
  /** The size of the 4-process append run. */
  append: RunSize;
}

/** Measures each design at every channel count of `plan`. */
export async function scaleFigures(designs: readonly Design[], plan: ScalePlan, ctx: RunContext): Promise<Figure[]> {
  const dataDir = await mkdtemp(join(ctx.root, "scale-"));
  const figures: Figure[] = [];
  const appenders = await startWorkers(4);
  try {
    let present = 0;
    for (const channels of plan.channels) {
      present = makeIdleChannels(dataDir, present, channels);
      figures.push(...(await measureAt(designs, plan, channels, dataDir, appenders, ctx)));
    }
  } finally {
    for (const worker of appenders) worker.close();
  }
  return figures;
}

async function measureAt(
  designs: readonly Design[],
  plan: ScalePlan,
  channels: number,
  dataDir: string,
  appenders: WorkerProcess[],
  ctx: RunContext,
): Promise<Figure[]> {
  const starts = {} as Record<DesignName, number[]>;
  const deliveries = {} as Record<DesignName, number[]>;
  const appends = {} as Record<DesignName, number[]>;
  for (const design of designs) {
    ctx.log(`scale: ${channels} channel(s), ${design.name}`);
    starts[design.name] = [];
    for (let i = 0; i < plan.starts; i += 1) {
      const spawnedAt = performance.now();
      const server = await startServer(design, dataDir);
      starts[design.name]!.push(performance.now() - spawnedAt);
      await server.close();
    }
    const [app, agent] = await Promise.all([startServer(design, dataDir), startServer(design, dataDir)]);
    try {
      deliveries[design.name] = (await measureDelivery(design, app, agent, `scale-${design.name}-${channels}`, plan.deliveries)).fromReturn;
    } finally {
      await Promise.all([app.close(), agent.close()]);
    }
    appends[design.name] = [(await fillQueue(design, appenders, plan.append, ctx, { dataDir })).appendsPerSecond];
  }
  return [
    { key: `scale.serverStart.${channels}`, name: `scale ${channels}: server spawn → initialized`, unit: "ms", better: "lower", samples: starts },
    { key: `scale.delivery.${channels}`, name: `scale ${channels}: delivery`, unit: "ms", better: "lower", samples: deliveries },
    { key: `scale.append4.${channels}`, name: `scale ${channels}: appends/s, 4 procs`, unit: "/s", better: "higher", samples: appends },
  ];
}

/**
 * Adds idle channels `idle-<from>` … `idle-<to - 1>`, each a folder with a small queue in
 * each of its two files, as a reader leaves it.
 * @returns the number of idle channels now present.
 */
function makeIdleChannels(dataDir: string, from: number, to: number): number {
  const ts = new Date().toISOString();
  const answered = JSON.stringify({ version: 1, next_seq: 4, messages: [{ seq: 3, event: "answer", data: { thread_id: "t1", text: "ok" }, ts }] });
  const drained = JSON.stringify({ version: 1, next_seq: 3, messages: [] });
  for (let index = from; index < to; index += 1) {
    const channelId = `idle-${index}`;
    mkdirSync(channelDir(dataDir, channelId), { recursive: true, mode: 0o700 });
    writeFileSync(queueFile(dataDir, channelId, "ui"), answered, { mode: 0o600 });
    writeFileSync(queueFile(dataDir, channelId, "agent"), drained, { mode: 0o600 });
  }
  return Math.max(from, to);
}
