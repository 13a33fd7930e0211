/**
 * The performance targets, each checked against one figure: backchannel's on its file
 * store (and the status line's) against the baseline, and the Redis store's against the
 * file store.
 */
import type { Summary } from "./stats.js";
import { PATHS } from "./suites/claude-code-paths.js";

/** A target and how to check it. */
export interface Target {
  /** The figure it applies to. */
  key: string;
  /** The target in words, for the table. */
  text: string;
  /** Whether backchannel meets it, given both designs' summaries and the ratio. */
  met(backchannel: Summary, baseline: Summary, ratio: number): boolean;
}

const latency: Target["met"] = (backchannel, _baseline, ratio) => backchannel.p50 < 20 && backchannel.p99 < 100 && ratio >= 10;
const LATENCY_TEXT = "p50 < 20, p99 < 100, ≥ 10×";

/** Every target. */
export const TARGETS: readonly Target[] = [
  { key: "wake.exit", text: LATENCY_TEXT, met: latency },
  { key: "wake.follow", text: LATENCY_TEXT, met: latency },
  { key: "delivery", text: LATENCY_TEXT, met: latency },
  { key: "throughput.append.4", text: "≥ 1,500/s", met: (backchannel) => backchannel.p50 >= 1500 },
  { key: "throughput.lost", text: "0", met: (backchannel) => backchannel.max === 0 },
  { key: "throughput.duplicated", text: "0", met: (backchannel) => backchannel.max === 0 },
  { key: "idle.appCalls", text: "≤ 4/min", met: (backchannel) => backchannel.max <= 4 },
  { key: "context.leanChars", text: "≤ 4,000", met: (backchannel) => backchannel.p50 <= 4000 },
  // The issue asks for a status line process "well under 150 ms": most runs under it.
  { key: "awareness.statusline.silent", text: "p90 < 150", met: (backchannel) => backchannel.p90 < 150 },
  { key: "awareness.statusline.busy", text: "p90 < 150", met: (backchannel) => backchannel.p90 < 150 },
  // The reader in MCP Inspector: answers as fast as a person notices, no ask stalls, idle as cheap as a long-poll.
  // One principal's flood of unread polls: another's call stays prompt, the server's memory under twice its quiet size.
  { key: "flood.batches.otherCall", text: "max < 500", met: (backchannel) => backchannel.max < 500 },
  { key: "flood.batches.rss", text: "max < 2× quiet", met: (backchannel, quiet) => backchannel.max < 2 * quiet.p50 },
  { key: "inspector.answerToScreen", text: "p50 ≤ 100", met: (backchannel) => backchannel.p50 <= 100 },
  // The reader in a browser tab (the browser host): the manual readable soon after the link is opened, answers at once.
  { key: "browser-tab.manual.whole", text: "p50 ≤ 500", met: (backchannel) => backchannel.p50 <= 500 },
  { key: "browser-tab.answerToCard", text: "p50 ≤ 50", met: (backchannel) => backchannel.p50 <= 50 },
  { key: "browser-tab.plugin.askToScreen", text: "p50 ≤ 2× floor", met: (_summary, _floor, ratio) => ratio <= 2 },
  { key: "browser-tab.plugin.requests", text: "≤ 2", met: (summary) => summary.max <= 2 },
  { key: "inspector.askToAgent", text: "no stall: max < 5,000", met: (backchannel) => backchannel.max < 5000 },
  { key: "inspector.idleCalls", text: "≤ 2.5/min", met: (backchannel) => backchannel.max <= 2.5 },
  { key: "inspector.shortPolls", text: "0", met: (backchannel) => backchannel.max === 0 },
  { key: "inspector.cancels", text: "0", met: (backchannel) => backchannel.max === 0 },
  // A 1 MiB markdown document costs what a short one does.
  { key: "reader.long.load", text: "p50 ≤ 1,000", met: (backchannel) => backchannel.p50 <= 1000 },
  { key: "reader.long.ask", text: "p50 ≤ 100", met: (backchannel) => backchannel.p50 <= 100 },
  { key: "reader.long.answer", text: "p50 ≤ 100", met: (backchannel) => backchannel.p50 <= 100 },
  // A 718 KB document in Inspector: readable within 2 s of the call, answers and follow-ups as a person notices.
  ...(["closed", "open", "emptied"] as const).flatMap((sidebar) => [
    { key: `inspector.long.${sidebar}.firstScreen`, text: "≤ 2,000", met: (backchannel: Summary) => backchannel.p50 <= 2000 },
    { key: `inspector.long.${sidebar}.followUpAsk`, text: "p50 ≤ 300", met: (backchannel: Summary) => backchannel.p50 <= 300 },
    { key: `inspector.long.${sidebar}.followUpAnswer`, text: "p50 ≤ 300", met: (backchannel: Summary) => backchannel.p50 <= 300 },
  ]),
  // Claude Code: ask → answer within 2× Claude Code's floor for the requests the path needs, no more requests than it needs, none idle.
  ...PATHS.flatMap((path): Target[] => [
    { key: `claude-code.${path.name}.askToAnswer`, text: "p50 ≤ 2× floor", met: (_summary, _floor, ratio) => ratio <= 2 },
    { key: `claude-code.${path.name}.requests`, text: `≤ ${path.turnsPerAsk}`, met: (summary) => summary.max <= path.turnsPerAsk },
    { key: `claude-code.${path.name}.idle`, text: "0", met: (summary) => summary.max === 0 },
  ]),
];

/** A target of the Redis store and how to check it. */
export interface RedisTarget {
  /** The figure it applies to. */
  key: string;
  /** The target in words, for the table. */
  text: string;
  /** Whether the Redis store meets it, given its summary and the file store's. */
  met(redis: Summary, file: Summary): boolean;
}

const redisLatency: RedisTarget["met"] = (redis) => redis.p50 <= 5 && redis.p99 <= 25;
const REDIS_LATENCY_TEXT = "p50 ≤ 5, p99 ≤ 25";
/** Idle costs are noisy (wake-ups of the whole machine): "no worse" allows 10 %. */
const noWorse: RedisTarget["met"] = (redis, file) => redis.p50 <= file.p50 * 1.1;
const NO_WORSE_TEXT = "≤ the file store's (+10 %)";

/** The Redis store's targets. The exit-mode wake includes the watcher's process teardown (see the README), so the wake target is the follow-mode line's. */
export const REDIS_TARGETS: readonly RedisTarget[] = [
  { key: "wake.follow", text: REDIS_LATENCY_TEXT, met: redisLatency },
  { key: "delivery", text: REDIS_LATENCY_TEXT, met: redisLatency },
  { key: "throughput.append.16", text: "≥ 10,000/s", met: (redis) => redis.p50 >= 10_000 },
  { key: "throughput.lost", text: "0", met: (redis) => redis.max === 0 },
  { key: "throughput.duplicated", text: "0", met: (redis) => redis.max === 0 },
  { key: "idle.appCalls", text: NO_WORSE_TEXT, met: noWorse },
  { key: "idle.serverCpu", text: NO_WORSE_TEXT, met: noWorse },
  { key: "idle.watcherCpu", text: NO_WORSE_TEXT, met: noWorse },
];
