/**
 * Figure 20: the Redis store on a Redis Cluster of three primaries and three replicas
 * (deploy/redis-cluster.ts, every node durable as the single redis-server is:
 * appendonly, appendfsync always), beside one redis-server and the file store, in one
 * run; what waiting for the replicas costs (the default, `WAIT` after each change),
 * against the same cluster answering without it (`BACKCHANNEL_REDIS_REPLICAS=0`); and
 * what a failover costs a reader.
 *
 * - One append at a time: the store's `append` in this process, one after the other
 *   on one queue; each sample is one append, from the call to its answer.
 * - Appends/s from 4 worker processes, a channel each (./throughput.ts): on the cluster
 *   the channels fall on different primaries. Every key checked stored exactly once.
 * - Delivery and the round trip (./delivery.ts), through two stdio servers on each store.
 * - Failover, last: a store's 30 s long poll waits on a channel; the primary that owns the
 *   channel's slot is SIGKILLed; the clock runs from just before the signal to the poll's
 *   end (answered or failed), and to the first append on the channel the store
 *   acknowledges (one tried after another, each failing within the store's 2 s), read
 *   against the cluster's own promotion of the replica (`CLUSTER NODES` asked every 20 ms
 *   through redis-cli, so up to some 30 ms late). The killed node is then started again
 *   and rejoins as a replica before the next round.
 *
 * Solo figures: each row is read against a simpler store measured in the same run
 * (one redis-server against the file store, the cluster without WAIT against one
 * redis-server, the cluster with WAIT against both).
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { type RunningRedisCluster, startRedisCluster } from "../../deploy/redis-cluster.js";
import { FileStore } from "../../store/file/file-store.js";
import { RedisStore } from "../../store/redis/redis-store.js";
import type { ChannelStore } from "../../store/store.js";
import { startRedis } from "../../test/support/redis-server.js";
import { BACKCHANNEL, type Design, type DesignName, redisClusterDesign, redisDesign } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import type { Plan } from "../plan.js";
import { startWorkers } from "../procs/worker.js";
import type { SoloFigure } from "../solo.js";
import { deliveryFigures } from "./delivery.js";
import { fillQueue } from "./throughput.js";
import { withTimeout } from "../timing.js";

/** How the suite is sized. */
export interface RedisClusterPlan {
  /** Appends timed one at a time, per store. */
  appends: number;
  /** Fill runs of 4 processes, per store. */
  fills: number;
  /** Primaries SIGKILLed, one after the other. */
  failovers: number;
}

/** What each design is called in the table. */
const LABELS: Partial<Record<DesignName, string>> = {
  backchannel: "the file store",
  redis: "one redis-server",
  "redis-cluster": "Redis Cluster 3×3, WAIT for the replicas (default)",
  "redis-cluster-async": "Redis Cluster 3×3, no WAIT (BACKCHANNEL_REDIS_REPLICAS=0)",
};

/** Each row and the row it is read against. */
const AGAINST: [DesignName, DesignName][] = [
  ["redis", "backchannel"],
  ["redis-cluster-async", "redis"],
  ["redis-cluster", "redis-cluster-async"],
  ["redis-cluster", "redis"],
];

/** Measures the stores side by side. */
export async function redisClusterFigures(plan: Plan, ctx: RunContext): Promise<SoloFigure[]> {
  ctx.log("redis-cluster: starting a Redis Cluster of 3 primaries and 3 replicas, and one redis-server");
  const cluster = await startRedisCluster();
  const single = await startRedis({ appendonly: "yes", appendfsync: "always" });
  try {
    const file = BACKCHANNEL;
    const redis = redisDesign(single.url, 16, { pid: single.child().pid });
    const withWait = redisClusterDesign(cluster.url, "all");
    const noWait = redisClusterDesign(cluster.url, 0);
    /** The cluster emptied, between designs that would share its channels. */
    const clear = async () => {
      for (const port of await cluster.primaries()) await cluster.cli(port, ["flushall"]);
    };

    const samples = new Map<string, Partial<Record<DesignName, number[]>>>();
    const keep = (key: string, design: DesignName, values: number[]) => samples.set(key, { ...samples.get(key), [design]: values });

    for (const design of [file, redis, noWait, withWait]) {
      ctx.log(`redis-cluster: ${plan.redisCluster.appends} appends one at a time, ${design.name}`);
      keep("append", design.name, await appendOneAtATime(design, plan.redisCluster.appends, ctx));
    }
    const workers = await startWorkers(4);
    try {
      for (const design of [file, redis, noWait, withWait]) {
        ctx.log(`redis-cluster: appends/s from 4 processes, a channel each, ${design.name}`);
        const rates: number[] = [];
        for (let run = 0; run < plan.redisCluster.fills; run++) {
          rates.push((await fillQueue(design, workers, plan.throughput, ctx, { ownChannels: true })).appendsPerSecond);
        }
        keep("append.4", design.name, rates);
      }
    } finally {
      for (const worker of workers) worker.close();
    }
    const delivery: Figure[] = [];
    for (const designs of [[file, redis, noWait], [withWait]]) {
      await clear();
      delivery.push(...(await deliveryFigures(designs, plan.delivery, ctx)));
    }
    for (const figure of delivery) {
      for (const [design, values] of Object.entries(figure.samples)) keep(figure.key, design as DesignName, values);
    }
    await clear();

    const rows: SoloFigure[] = [];
    const names: Record<string, [string, string]> = {
      append: ["append, one at a time", "ms"],
      "append.4": ["appends/s from 4 processes, a channel each", "/s"],
      delivery: ["delivery: notify_ui returns → app has it", "ms"],
      roundTrip: ["round trip: ask → agent woken → answer at app", "ms"],
    };
    for (const [key, [name, unit]] of Object.entries(names)) {
      const measured = samples.get(key) ?? {};
      for (const [design, against] of AGAINST) {
        if (!measured[design] || !measured[against]) continue;
        rows.push({
          key: `redisCluster.${key}.${design}`,
          name: `${name}: ${LABELS[design]}`,
          unit,
          solo: true,
          samples: measured[design]!,
          against: { name: LABELS[against]!, samples: measured[against]! },
        });
      }
    }
    rows.push(...(await failoverFigures(cluster, plan.redisCluster.failovers, ctx)));
    return rows;
  } finally {
    await single.stop();
    await cluster.stop();
  }
}

/** `count` appends one after the other on one queue of `design`'s store, opened in this process; each one's time. */
async function appendOneAtATime(design: Design, count: number, ctx: RunContext): Promise<number[]> {
  const dataDir = await mkdtemp(join(ctx.root, `${design.name}-one-at-a-time-`));
  const location = design.location(dataDir);
  const limits = { maxQueueMessages: count + 100 };
  const store: ChannelStore & { close?: () => Promise<void> } =
    location.kind === "file"
      ? new FileStore({ dataDir, limits })
      : new RedisStore({ url: location.url, limits, checkSettings: false, replicas: design.redisReplicas });
  const channel = `bench-one-at-a-time-${Math.random().toString(36).slice(2, 8)}`;
  try {
    // Unrecorded: the first appends open connections and load scripts.
    for (let index = 0; index < 20; index++) await store.append(channel, "agent", "warm", { index });
    const times: number[] = [];
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      await store.append(channel, "agent", "timed", { index });
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    await store.close?.();
  }
}

/** How long the whole of one failover may take before the run fails: the promotion, the poll's end, an append acknowledged. */
const FAILOVER_TIMEOUT_MS = 30_000;

/**
 * `count` failovers of the primary under a waiting poll (see the module's comment); the
 * killed node rejoins before the next.
 * @throws Error when a round does not end in time, or a poll ends with messages nobody sent.
 */
async function failoverFigures(cluster: RunningRedisCluster, count: number, ctx: RunContext): Promise<SoloFigure[]> {
  const pollEnded: number[] = [];
  const appended: number[] = [];
  const promoted: number[] = [];
  let failedPolls = 0;
  let failedAppends = 0;
  const store = new RedisStore({ url: cluster.url, checkSettings: false, warn: () => undefined });
  // Set when the suite ends, so that a round given up on stops trying.
  let ended = false;
  try {
    for (let round = 0; round < count; round++) {
      const channel = `bench-failover-${round}-${Math.random().toString(36).slice(2, 8)}`;
      const meta = `bc:{${channel}}:meta`;
      const primary = await cluster.primaryOf(meta);
      const [replica] = primary === undefined ? [] : await cluster.replicasOf(primary);
      if (primary === undefined || replica === undefined) throw new Error(`redis-cluster failover ${round + 1}: ${channel}'s primary has no replica`);
      ctx.log(`redis-cluster: failover ${round + 1} of ${count}, the primary on port ${primary} SIGKILLed`);
      // One acknowledged message first: the channel exists, and its primary's replica has it.
      await store.append(channel, "ui", "before", { round });
      let waiting!: () => void;
      const armed = new Promise<void>((resolve) => (waiting = resolve));
      const poll = store.poll(channel, "agent", { after: 0, waitMs: 30_000, onWaiting: () => waiting() });
      await armed;
      const killedAt = performance.now();
      const kill = cluster.kill(primary);
      const pollEnd = poll.then(
        (result) => {
          if (result.messages.length > 0) throw new Error(`redis-cluster failover ${round + 1}: the poll returned a message nobody sent`);
          return performance.now();
        },
        () => {
          failedPolls += 1;
          return performance.now();
        },
      );
      const firstAppend = (async () => {
        while (!ended) {
          try {
            await store.append(channel, "ui", "after", { round });
            return performance.now();
          } catch {
            failedAppends += 1;
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        }
        return Number.NaN;
      })();
      const promotion = (async () => {
        while (!ended && (await cluster.primaryOf(meta).catch(() => undefined)) !== replica) await new Promise((resolve) => setTimeout(resolve, 20));
        return performance.now();
      })();
      const [, pollEndedAt, appendedAt, promotedAt] = await withTimeout(
        Promise.all([kill, pollEnd, firstAppend, promotion]),
        FAILOVER_TIMEOUT_MS,
        `redis-cluster failover ${round + 1}`,
      );
      pollEnded.push(pollEndedAt - killedAt);
      appended.push(appendedAt - killedAt);
      promoted.push(promotedAt - killedAt);
      await cluster.restart(primary);
      await cluster.healthy();
    }
  } finally {
    ended = true;
    await store.close();
  }
  const against = { name: "the cluster promotes the replica (kill → CLUSTER NODES says so)", samples: promoted };
  return [
    {
      key: "redisCluster.failover.pollEnds",
      name: "failover: primary SIGKILLed → a waiting 30 s poll on its slot answered or failed",
      unit: "ms",
      solo: true,
      samples: pollEnded,
      against,
      details: { failedPolls, polls: count },
    },
    {
      key: "redisCluster.failover.appendAcknowledged",
      name: "failover: primary SIGKILLed → the first append on its slot acknowledged (WAIT)",
      unit: "ms",
      solo: true,
      samples: appended,
      against,
      details: { failedAppends },
    },
  ];
}
