/**
 * Turns figures into results (summaries, ratio, target) and prints them: a markdown
 * table for people, a JSON file with every raw sample for the record.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { DesignName } from "./designs.js";
import type { Figure } from "./figures.js";
import { machineLine, type Machine } from "./machine.js";
import { summarize, type Summary } from "./stats.js";
import { REDIS_TARGETS, TARGETS } from "./targets.js";

/** A figure with what the table shows. */
export interface FigureResult extends Figure {
  summaries: Partial<Record<DesignName, Summary>> & Record<"backchannel" | "baseline", Summary>;
  /**
   * How many times better backchannel is at the median (baseline / backchannel for
   * times and costs, backchannel / baseline for rates); `null` when it means nothing
   * (both zero). Medians of times are floored at 1 ms, the resolution that matters here.
   */
  ratio: number | null;
  target?: { text: string; met: boolean };
  /** The Redis store's target, where it has one and was measured. */
  redisTarget?: { text: string; met: boolean };
}

/** Everything a run wrote. */
export interface RunResult {
  mode: "quick" | "full";
  startedAt: string;
  durationSeconds: number;
  /** `git describe`-like: the commit measured, with "+dirty" when the tree had changes. */
  commit: string;
  machine: Machine;
  /** The 1-minute load average before and after the run: other work on the machine shows here. */
  loadAverage: { before: number; after: number };
  /** The Redis server the Redis store was measured on (version and persistence settings), when it was. */
  redis?: string;
  figures: FigureResult[];
}

/** Summaries, ratio and target of each figure. */
export function analyse(figures: Figure[]): FigureResult[] {
  return figures.map((figure) => {
    const summaries = {
      backchannel: summarize(figure.samples.backchannel),
      baseline: summarize(figure.samples.baseline),
      ...(figure.samples.redis && { redis: summarize(figure.samples.redis) }),
    };
    const ratio = ratioOf(figure, summaries.backchannel.p50, summaries.baseline.p50);
    const target = TARGETS.find((candidate) => candidate.key === figure.key);
    const redisTarget = REDIS_TARGETS.find((candidate) => candidate.key === figure.key);
    return {
      ...figure,
      summaries,
      ratio,
      ...(target && { target: { text: target.text, met: target.met(summaries.backchannel, summaries.baseline, ratio ?? 0) } }),
      ...(redisTarget &&
        summaries.redis && { redisTarget: { text: redisTarget.text, met: redisTarget.met(summaries.redis, summaries.backchannel) } }),
    };
  });
}

function ratioOf(figure: Figure, backchannel: number, baseline: number): number | null {
  const floor = figure.unit === "ms" ? 1 : 0;
  const [numerator, denominator] = figure.better === "lower" ? [baseline, Math.max(backchannel, floor)] : [backchannel, baseline];
  if (denominator <= 0) return numerator > 0 ? Infinity : null;
  return numerator / denominator;
}

/**
 * The results as a markdown table, headed by the machine and the mode. The Redis store's
 * columns appear when a figure of the run measured it.
 */
export function renderTable(result: RunResult): string {
  const withRedis = result.figures.some((figure) => figure.summaries.redis);
  const lines = [
    `backchannel vs polling baseline${withRedis ? ", file store and Redis store" : ""} — ${result.mode} run, ${result.startedAt}, commit ${result.commit}`,
    `Machine: ${machineLine(result.machine)}; load average ${result.loadAverage.before.toFixed(1)} → ${result.loadAverage.after.toFixed(1)}`,
    ...(result.redis ? [`Redis: ${result.redis}`] : []),
    "",
    withRedis
      ? "| figure | unit | backchannel (file store) p50 / p90 / p99 (n) | Redis store p50 / p90 / p99 (n) | baseline p50 / p90 / p99 (n) | × better (file vs baseline) | target (file store) | target (Redis store) |"
      : "| figure | unit | backchannel p50 / p90 / p99 (n) | baseline p50 / p90 / p99 (n) | × better | target |",
    withRedis ? "|---|---|---|---|---|---|---|---|" : "|---|---|---|---|---|---|",
  ];
  for (const figure of result.figures) {
    const target = targetCell(figure.target);
    const { backchannel, redis, baseline } = figure.summaries;
    lines.push(
      withRedis
        ? `| ${figure.name} | ${figure.unit} | ${cell(backchannel)} | ${redis ? cell(redis) : "–"} | ${cell(baseline)} | ${ratioCell(figure)} | ${target} | ${targetCell(figure.redisTarget)} |`
        : `| ${figure.name} | ${figure.unit} | ${cell(backchannel)} | ${cell(baseline)} | ${ratioCell(figure)} | ${target} |`,
    );
  }
  return lines.join("\n");
}

function targetCell(target: { text: string; met: boolean } | undefined): string {
  return target ? `${target.met ? "met" : "MISSED"}: ${target.text}` : "";
}

/** Writes `result` to `path` as JSON, samples rounded to 0.01. */
export async function writeResult(path: string, result: RunResult): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const rounded = {
    ...result,
    figures: result.figures.map((figure) => ({
      ...figure,
      samples: Object.fromEntries(Object.entries(figure.samples).map(([design, samples]) => [design, samples.map(round)])),
    })),
  };
  await writeFile(path, `${JSON.stringify(rounded, (_key, value: unknown) => (typeof value === "number" ? round(value) : value))}\n`);
}

function cell(summary: Summary): string {
  if (summary.n === 1) return format(summary.p50);
  return `${format(summary.p50)} / ${format(summary.p90)} / ${format(summary.p99)} (${summary.n})`;
}

function ratioCell(figure: FigureResult): string {
  if (figure.ratio === null) return "–";
  if (figure.ratio === Infinity) return "∞";
  const floored = figure.unit === "ms" && figure.summaries.backchannel.p50 < 1;
  return `${floored ? "≥ " : ""}${format(figure.ratio)}×`;
}

function format(value: number): string {
  if (Math.abs(value) < 10) return value.toFixed(1);
  return Math.round(value).toLocaleString("en-US");
}

function round(value: number): number {
  return Number.isFinite(value) ? Math.round(value * 100) / 100 : value;
}
