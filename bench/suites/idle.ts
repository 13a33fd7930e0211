/**
 * Figure 5: what one open reader costs while nobody asks anything. For each design, an
 * app loop reads the ui queue (a 30 s long-poll after another for backchannel, a poll
 * every 1,200 ms for the baseline) through its server, and a watcher waits on the
 * agent queue. All designs run side by side for the window, which is cut into
 * slices; each slice gives one sample of app tool calls per minute and of CPU time
 * per minute of the server and of the watcher (from /proc, see ../procs/cpu.ts), and of
 * the Redis store's redis-server, which nothing else uses meanwhile.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppReader } from "../app-reader.js";
import type { Design, DesignName } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { cpuTimeMs } from "../procs/cpu.js";
import { startServer } from "../procs/server.js";
import { spawnWatcher } from "../procs/watcher.js";
import { withTimeout } from "../timing.js";

/** How long to watch and how to cut it. */
export interface IdlePlan {
  windowMs: number;
  sliceMs: number;
}

interface IdleSamples {
  calls: number[];
  serverCpu: number[];
  watcherCpu: number[];
  /** The store's own server (redis-server), for a design that has one. */
  storeServerCpu: number[];
}

const CHANNEL = "bench-idle";

/**
 * Measures all designs at once over `plan.windowMs`. A design with a store server of its
 * own (redis-server) adds a solo figure: that server's CPU over the same window.
 */
export async function idleFigures(designs: readonly Design[], plan: IdlePlan, ctx: RunContext): Promise<(Figure | SoloFigure)[]> {
  ctx.log(`idle: ${designs.map((design) => design.name).join(" and ")} side by side for ${plan.windowMs / 1000} s`);
  const results = await Promise.all(designs.map((design) => measure(design, plan, ctx)));
  const pick = (kind: "calls" | "serverCpu" | "watcherCpu") =>
    Object.fromEntries(designs.map((design, index) => [design.name, results[index]![kind]])) as Record<DesignName, number[]>;
  const storeServers = designs.flatMap((design, index): SoloFigure[] =>
    results[index]!.storeServerCpu.length > 0
      ? [
          {
            key: `idle.storeServerCpu.${design.name}`,
            name: `idle: ${design.name}-server CPU per minute (the store's own server, beside its backchannel server)`,
            unit: "ms/min",
            solo: true,
            samples: results[index]!.storeServerCpu,
            against: { name: "the backchannel servers' CPU, main table" },
          },
        ]
      : [],
  );
  return [
    { key: "idle.appCalls", name: "idle: app tool calls per minute", unit: "calls/min", better: "lower", samples: pick("calls") },
    { key: "idle.serverCpu", name: "idle: server CPU per minute", unit: "ms/min", better: "lower", samples: pick("serverCpu") },
    { key: "idle.watcherCpu", name: "idle: watcher CPU per minute", unit: "ms/min", better: "lower", samples: pick("watcherCpu") },
    ...storeServers,
  ];
}

async function measure(design: Design, plan: IdlePlan, ctx: RunContext): Promise<IdleSamples> {
  const dataDir = await mkdtemp(join(ctx.root, `${design.name}-idle-`));
  const server = await startServer(design, dataDir);
  if (server.pid === undefined) throw new Error(`idle measures a server process of its own; ${design.name} has none`);
  const serverPid = server.pid;
  // The channel exists before the watcher starts, as it does after open_reader.
  await server.call("poll_ui_messages", { channel_id: CHANNEL });
  const watcher = spawnWatcher(design, dataDir, CHANNEL, false);
  const samples: IdleSamples = { calls: [], serverCpu: [], watcherCpu: [], storeServerCpu: [] };
  try {
    await withTimeout(watcher.ready, 10_000, `${design.name} watcher to arm`);
    const perMinute = 60_000 / plan.sliceMs;
    let serverCpu = cpu(serverPid);
    let watcherCpu = cpu(watcher.child.pid);
    const storePid = design.storeServerPid;
    let storeCpu = storePid === undefined ? 0 : cpu(storePid);
    const reader = new AppReader(server, CHANNEL, design, plan.windowMs + 60_000);
    try {
      let calls = 0;
      const started = performance.now();
      for (let slice = 1; slice <= Math.round(plan.windowMs / plan.sliceMs); slice += 1) {
        await sleep(started + slice * plan.sliceMs - performance.now());
        const [nowServer, nowWatcher, nowCalls] = [cpu(serverPid), cpu(watcher.child.pid), reader.calls];
        samples.calls.push((nowCalls - calls) * perMinute);
        samples.serverCpu.push((nowServer - serverCpu) * perMinute);
        samples.watcherCpu.push((nowWatcher - watcherCpu) * perMinute);
        [serverCpu, watcherCpu, calls] = [nowServer, nowWatcher, nowCalls];
        if (storePid !== undefined) {
          const nowStore = cpu(storePid);
          samples.storeServerCpu.push((nowStore - storeCpu) * perMinute);
          storeCpu = nowStore;
        }
      }
    } finally {
      await reader.stop();
    }
    if (watcher.child.exitCode !== null) throw new Error(`${design.name} watcher exited while idle (${watcher.child.exitCode})`);
  } finally {
    watcher.stop();
    await server.close();
  }
  return samples;
}

function cpu(pid: number | undefined): number {
  const ms = pid === undefined ? undefined : cpuTimeMs(pid);
  if (ms === undefined) throw new Error(`no CPU time for process ${pid}: the idle figures need Linux's /proc`);
  return ms;
}
