/**
 * How many samples each mode takes. The quick mode (the default) is sized for about
 * three and a half minutes on an idle 2-core machine (4–5 minutes when other test suites
 * share the cores), plus about 4 minutes of the reader in MCP Inspector; the full mode
 * takes about 45 minutes, gives p99 from at least 100 samples where a sample is cheap,
 * and watches idle cost for 10 minutes.
 *
 * The baseline gets fewer exit-mode and round-trip samples than backchannel: each
 * costs it a whole timer period (500 ms, 1,200 ms) against a few ms.
 */
import type { Design } from "./designs.js";
import type { AwarenessPlan } from "./suites/awareness.js";
import type { AgentHostsPlan } from "./suites/agent-hosts.js";
import type { BeforePlan } from "./suites/before.js";
import type { BrowserTabPlan } from "./suites/browser-tab.js";
import type { ClaudeCodePlan } from "./suites/claude-code.js";
import type { DeliveryCounts } from "./suites/delivery.js";
import type { FloodPlan } from "./suites/flood.js";
import type { IdlePlan } from "./suites/idle.js";
import type { InspectorPlan } from "./suites/inspector.js";
import type { InspectorLongPlan } from "./suites/inspector-long.js";
import type { McpUsePlan } from "./suites/mcp-use.js";
import type { ReaderLongPlan } from "./suites/reader-long.js";
import type { RedisClusterPlan } from "./suites/redis-cluster.js";
import type { ScalePlan } from "./suites/scale.js";
import type { ThroughputPlan } from "./suites/throughput.js";
import type { WakeCounts } from "./suites/wake.js";

/** Everything a mode decides. */
export interface Plan {
  wake(design: Design): WakeCounts;
  delivery(design: Design): DeliveryCounts;
  throughput: ThroughputPlan;
  idle: IdlePlan;
  scale: ScalePlan;
  awareness: AwarenessPlan;
  inspector: InspectorPlan;
  readerLong: ReaderLongPlan;
  inspectorLong: InspectorLongPlan;
  claudeCode: ClaudeCodePlan;
  browserTab: BrowserTabPlan;
  mcpUse: McpUsePlan;
  flood: FloodPlan;
  agentHosts: AgentHostsPlan;
  before: BeforePlan;
  redisCluster: RedisClusterPlan;
}

/** The reader the long-document figures are read against: the last commit before the reader bounded its height. */
const READER_BEFORE = "0c4312a";

/** Whether a design wakes on events (either store of backchannel), so that a sample costs it little. */
const fast = (design: Design) => design.name !== "baseline";

/** The default: about two and a half minutes. */
export const QUICK: Plan = {
  wake: (design) => ({ exit: fast(design) ? 12 : 6, follow: 30 }),
  delivery: (design) => ({ delivery: 30, roundTrip: fast(design) ? 10 : 4 }),
  throughput: {
    processes: [1, 4, 16],
    messages: 1000,
    durationMs: 500,
    repeats: 1,
    depth: { queued: [1, 100, 1000], processes: [1, 4], messages: 300, durationMs: 2000, repeats: 3 },
  },
  // Three slices, so that the median is the steady cost: a fresh process pays a one-off
  // garbage collection some 30–40 s after start (about 100 ms for a watcher that loaded the Redis client).
  idle: { windowMs: 90_000, sliceMs: 30_000 },
  scale: { channels: [1, 100, 10_000], starts: 2, deliveries: 8, append: { messages: 1000, durationMs: 500 } },
  // About 5 s of status line rounds and 20 s of pushes.
  awareness: { statuslineRounds: 30, pushes: 30 },
  // Two Inspector pages (20–40 s each to load on 2 cores), 9 asks each, 80 s idle: about 3 minutes.
  inspector: { asks: 9, idleMs: 80_000 },
  // A few minutes: the reader before this work spends seconds on every change of a 1 MiB document.
  readerLong: { loads: 3, asks: 3, beforeCommit: READER_BEFORE },
  // Three Inspector pages of the 718 KB document: about 2 minutes.
  inspectorLong: { followUps: 5, stateCalls: 5 },
  // Three sessions of 4 asks and a floor of 8 turns: 2–4 minutes (each session takes 10–30 s to start on 2 busy cores).
  claudeCode: { asks: 4, gapMs: [1_500, 3_000], floorSamples: 8 },
  // Five loads of the manual and ten answers in the browser host, a floor of 8 turns and 5 asks through Claude Code: about 2 minutes.
  browserTab: { loads: 5, answers: 10, asks: 5, floorSamples: 8 },
  // One page of mcp-use's chat (about 20 s to load and configure), 8 asks and 8 floor turns: about a minute.
  mcpUse: { asks: 8 },
  // Under a minute: filling the queue, then 30 calls quiet and beside each flood.
  flood: { calls: 30, batches: 16, separate: 200 },
  // Two hosts, each a floor session and a loop session of 6 asks: about 2 minutes.
  agentHosts: { asks: 6, gapMs: [1_500, 3_000], floorSamples: 8 },
  // Ten turns of 4 round trips per build (its commits come from --before).
  before: { commits: [], turns: 10, perTurn: 4 },
  // About a minute: a Redis Cluster and a redis-server started, 4 stores measured, 4 failovers.
  redisCluster: { appends: 300, fills: 3, failovers: 4 },
};

/** `--full`: enough samples for p99, and the idle cost over 10 minutes. */
export const FULL: Plan = {
  wake: (design) => ({ exit: fast(design) ? 150 : 60, follow: 200 }),
  delivery: (design) => ({ delivery: 200, roundTrip: fast(design) ? 100 : 40 }),
  throughput: {
    processes: [1, 4, 16],
    messages: 1000,
    durationMs: 5000,
    repeats: 5,
    depth: { queued: [1, 100, 1000], processes: [1, 4], messages: 1000, durationMs: 5000, repeats: 5 },
  },
  idle: { windowMs: 600_000, sliceMs: 60_000 },
  scale: { channels: [1, 100, 10_000], starts: 10, deliveries: 50, append: { messages: 1000, durationMs: 3000 } },
  awareness: { statuslineRounds: 200, pushes: 150 },
  inspector: { asks: 30, idleMs: 300_000 },
  readerLong: { loads: 10, asks: 40, beforeCommit: READER_BEFORE },
  inspectorLong: { followUps: 20, stateCalls: 20 },
  claudeCode: { asks: 20, gapMs: [2_000, 8_000], floorSamples: 40 },
  browserTab: { loads: 20, answers: 40, asks: 20, floorSamples: 40 },
  // Its chat slows as it grows (a reply's rendering and the whole history sent each turn): 20 asks and 20 floor turns take 10–20 minutes on a busy machine.
  mcpUse: { asks: 20 },
  flood: { calls: 100, batches: 16, separate: 200 },
  agentHosts: { asks: 20, gapMs: [2_000, 8_000], floorSamples: 40 },
  before: { commits: [], turns: 25, perTurn: 4 },
  redisCluster: { appends: 2000, fills: 10, failovers: 10 },
};
