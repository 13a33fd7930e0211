/**
 * Figures measured for backchannel alone: the polling baseline has nothing like them
 * (no status line, no push), so they have no baseline column and no "× better". Each
 * is read against something else instead: a floor measured in the same run (a bare
 * `node -e 0` for a process's start-up), or a figure of another suite, named in words
 * only (it is not measured again).
 */
import { machineLine } from "./machine.js";
import type { RunResult } from "./report.js";
import { summarize, type Summary } from "./stats.js";
import { TARGETS } from "./targets.js";

/** One measured quantity of backchannel alone. */
export interface SoloFigure {
  /** A stable key, e.g. "awareness.statusline.busy"; targets and the JSON refer to it. */
  key: string;
  /** What is measured, in a few words, for the table. */
  name: string;
  /** The unit of the samples, e.g. "ms". */
  unit: string;
  /** Marks the figure as solo, so that a run can tell it from a `Figure` of both designs. */
  solo: true;
  samples: number[];
  /**
   * What to read it against: `samples` of a floor taken in the same run (the table adds
   * the ratio and the difference of the medians), or, without samples, only its name.
   */
  against?: { name: string; samples?: number[] };
  /** What explains the figure, for the JSON only. */
  details?: Record<string, number | string>;
}

/** A solo figure of `samples` in `unit` (default "ms"), read against nothing yet. */
export function soloFigure(key: string, name: string, samples: number[], unit = "ms"): SoloFigure {
  return { key, name, unit, solo: true, samples };
}

/** A solo figure with what the table shows. */
export interface SoloResult extends SoloFigure {
  summary: Summary;
  /** The floor's summary, when it was measured. */
  floor?: Summary;
  /** This figure's median / the floor's, and this minus the floor's, when there is a floor. */
  vsFloor?: { ratio: number; difference: number };
  target?: { text: string; met: boolean };
}

/** Summaries, comparison with the floor, and target of each solo figure. */
export function analyseSolo(figures: readonly SoloFigure[]): SoloResult[] {
  return figures.map((figure) => {
    const summary = summarize(figure.samples);
    const floor = figure.against?.samples ? summarize(figure.against.samples) : undefined;
    const vsFloor = floor && { ratio: summary.p50 / floor.p50, difference: summary.p50 - floor.p50 };
    const target = TARGETS.find((candidate) => candidate.key === figure.key);
    return {
      ...figure,
      summary,
      ...(floor && { floor, vsFloor }),
      // A solo target reads backchannel's summary only; the floor stands in for the baseline it does not have.
      ...(target && { target: { text: target.text, met: target.met(summary, floor ?? summary, vsFloor?.ratio ?? 0) } }),
    };
  });
}

/** The solo figures as a markdown table, headed like the main one. */
export function renderSoloTable(run: RunResult, results: readonly SoloResult[]): string {
  const lines = [
    `backchannel alone (nothing in the polling baseline compares) — ${run.mode} run, ${run.startedAt}, commit ${run.commit}`,
    `Machine: ${machineLine(run.machine)}; load average ${run.loadAverage.before.toFixed(1)} → ${run.loadAverage.after.toFixed(1)}`,
    "",
    "| figure | unit | p50 / p90 / p99 (n) | read against | target |",
    "|---|---|---|---|---|",
  ];
  for (const result of results) {
    const target = result.target ? `${result.target.met ? "met" : "MISSED"}: ${result.target.text}` : "";
    lines.push(`| ${result.name} | ${result.unit} | ${cell(result.summary)} | ${againstCell(result)} | ${target} |`);
  }
  return lines.join("\n");
}

function againstCell(result: SoloResult): string {
  if (!result.against) return "";
  if (!result.floor || !result.vsFloor) return result.against.name;
  const { ratio, difference } = result.vsFloor;
  const sign = difference >= 0 ? "+" : "−";
  return `${result.against.name}: ${cell(result.floor)}; at p50 ${format(ratio)}×, ${sign}${format(Math.abs(difference))} ${result.unit}`;
}

function cell(summary: Summary): string {
  if (summary.n === 1) return format(summary.p50);
  return `${format(summary.p50)} / ${format(summary.p90)} / ${format(summary.p99)} (${summary.n})`;
}

/** As in the main table: one decimal under 10, else whole numbers with separators. */
function format(value: number): string {
  if (Math.abs(value) < 10) return value.toFixed(1);
  return Math.round(value).toLocaleString("en-US");
}
