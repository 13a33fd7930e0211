/**
 * Figures 2 and 3: agent → app delivery, and the whole round trip, through two real
 * server processes (one the app talks to, one the agent talks to) sharing a data
 * directory, as when a host gives the model and the app separate sessions.
 *
 * - Delivery: the app's loop (../app-reader.ts) reads the ui queue; the agent calls
 *   `notify_ui` at random moments (../stream.ts); a sample runs from `notify_ui`
 *   returning to the app's poll returning the message.
 * - Round trip: the agent arms a watcher (exit mode); the app calls `notify_agent`
 *   with an ask; the watcher exits; the agent reads with `poll_agent_messages` and
 *   answers with `notify_ui`; a sample runs from the app sending the ask to the app's
 *   poll returning the answer. No model time: the agent answers at once.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { AppReader } from "../app-reader.js";
import type { Design, DesignName } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import { assertExactlyOnce } from "../integrity.js";
import { startServer, type ServerProcess } from "../procs/server.js";
import { spawnWatcher } from "../procs/watcher.js";
import { streamLatencies, type Arrivals, type StreamLatencies } from "../stream.js";
import { pauseWithinPeriod, withTimeout } from "../timing.js";
import type { QueueMessage } from "../../protocol/message.js";

/** How many samples of each kind to take. */
export interface DeliveryCounts {
  delivery: number;
  roundTrip: number;
}

/** Longest one delivery may take before the run fails (the baseline needs 1,200 ms). */
const DELIVERY_TIMEOUT_MS = 10_000;
/** Longest the app loop of one measurement may run. */
const READER_MAX_MS = 10 * 60 * 1000;

/** Measures each design with `counts(design)` samples. */
export async function deliveryFigures(designs: readonly Design[], counts: (design: Design) => DeliveryCounts, ctx: RunContext): Promise<Figure[]> {
  const delivery = {} as Record<DesignName, number[]>;
  const deliveryFromCall = {} as Record<DesignName, number[]>;
  const roundTrip = {} as Record<DesignName, number[]>;
  for (const design of designs) {
    ctx.log(`delivery and round trip: ${design.name}`);
    const dataDir = await mkdtemp(join(ctx.root, `${design.name}-delivery-`));
    const [app, agent] = await Promise.all([startServer(design, dataDir), startServer(design, dataDir)]);
    try {
      const latencies = await measureDelivery(design, app, agent, "bench-delivery", counts(design).delivery);
      delivery[design.name] = latencies.fromReturn;
      deliveryFromCall[design.name] = latencies.fromCall;
      roundTrip[design.name] = (await measureRoundTrips(design, dataDir, app, agent, "bench-round-trip", counts(design).roundTrip)).roundTrip;
    } finally {
      await Promise.all([app.close(), agent.close()]);
    }
  }
  return [
    { key: "delivery", name: "delivery: notify_ui returns → app has it", unit: "ms", better: "lower", samples: delivery },
    { key: "delivery.fromCall", name: "delivery: notify_ui called → app has it", unit: "ms", better: "lower", samples: deliveryFromCall },
    { key: "roundTrip", name: "round trip: ask → agent woken → answer at app", unit: "ms", better: "lower", samples: roundTrip },
  ];
}

/** Delivery latencies on `channelId`; exported for the scale suite. */
export async function measureDelivery(
  design: Design,
  app: ServerProcess,
  agent: ServerProcess,
  channelId: string,
  count: number,
): Promise<StreamLatencies> {
  const reader = new AppReader(app, channelId, design, READER_MAX_MS);
  try {
    const arrivals: Arrivals = {
      next: async (timeoutMs) => {
        const { message, at } = await reader.next(timeoutMs);
        return { seq: message.seq, at };
      },
    };
    const send = async (index: number) =>
      (await agent.call<{ seq: number }>("notify_ui", { channel_id: channelId, event: "answer", data: { thread_id: `t${index}`, text: "ok" } })).seq;
    return await streamLatencies(`${design.name} delivery`, count, send, arrivals, DELIVERY_TIMEOUT_MS);
  } finally {
    await reader.stop();
  }
}

/**
 * Round trips on `channelId`, after one unrecorded: `roundTrip`, the ask sent → the
 * answer at the app; `send`, the app's `notify_agent` called → answered (the reader's
 * send). Exported for the suite against earlier commits (./before.ts).
 */
export async function measureRoundTrips(
  design: Design,
  dataDir: string,
  app: ServerProcess,
  agent: ServerProcess,
  channelId: string,
  count: number,
): Promise<{ roundTrip: number[]; send: number[] }> {
  const samples = { roundTrip: [] as number[], send: [] as number[] };
  const reader = new AppReader(app, channelId, design, READER_MAX_MS);
  try {
    // One unrecorded round first, as in every suite.
    for (let i = -1; i < count; i += 1) {
      const watcher = spawnWatcher(design, dataDir, channelId, false);
      try {
        await withTimeout(watcher.ready, DELIVERY_TIMEOUT_MS, `${design.name} watcher to arm`);
        await pauseWithinPeriod(Math.max(design.timerPeriodMs.watcher, design.timerPeriodMs.app));
        const askedAt = performance.now();
        await app.call("notify_agent", { channel_id: channelId, event: "ask", data: { thread_id: `t${i}`, question: "why?" } });
        const sentAt = performance.now();
        const { code } = await withTimeout(watcher.exited, DELIVERY_TIMEOUT_MS, `${design.name} watcher to exit`);
        if (code !== 0) throw new Error(`${design.name} watcher exited with ${code}, not 0`);
        const { messages } = await agent.call<{ messages: QueueMessage[] }>("poll_agent_messages", { channel_id: channelId });
        assertExactlyOnce(
          `${design.name} round trip (ask)`,
          [`t${i}`],
          messages.map((message) => threadOf(message.data)),
        );
        await agent.call("notify_ui", { channel_id: channelId, event: "answer", data: { thread_id: `t${i}`, text: "because" } });
        const { message, at } = await reader.next(DELIVERY_TIMEOUT_MS);
        assertExactlyOnce(`${design.name} round trip (answer)`, [`t${i}`], [threadOf(message.data)]);
        if (i >= 0) {
          samples.roundTrip.push(at - askedAt);
          samples.send.push(sentAt - askedAt);
        }
      } finally {
        watcher.stop();
      }
    }
  } finally {
    await reader.stop();
  }
  return samples;
}

function threadOf(data: unknown): string {
  return String((data as { thread_id?: unknown } | null)?.thread_id);
}
