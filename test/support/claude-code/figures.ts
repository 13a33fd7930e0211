/**
 * The figures of a reader loop run under Claude Code: ask → the model's next request
 * (the wake), ask → answer at the app, and model requests per ask.
 */
import type { AppOutcome } from "../simulated-app.js";
import type { ModelServer } from "./model-server.js";

/** What one run measured. */
export interface LoopFigures {
  /** Per ask: ms from the app's notify_agent to the first model request after it. */
  askToTurnMs: number[];
  /** Per ask: ms from notify_agent to the answer at the app. */
  askToAnswerMs: number[];
  /** Main-loop model requests from the first ask to the last answer, per ask. */
  turnsPerAsk: number;
}

/** The figures of `outcome` (the app's) against the requests `model` received. */
export function loopFigures(outcome: AppOutcome, model: ModelServer): LoopFigures {
  const times = model.turns().map((turn) => turn.at);
  const askToTurnMs = outcome.askedAtMs.map((asked) => (times.find((at) => at >= asked) ?? Number.NaN) - asked);
  const first = Math.min(...outcome.askedAtMs);
  const last = Math.max(...outcome.answers.map((answer) => answer.receivedAt));
  const during = times.filter((at) => at >= first && at <= last).length;
  return { askToTurnMs, askToAnswerMs: outcome.latenciesMs, turnsPerAsk: during / outcome.asked.length };
}

/** The median (nearest rank) of `samples`. */
export function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length / 2) - 1] ?? Number.NaN;
}

/** One line for a test's diagnostics. */
export function describeFigures(figures: LoopFigures): string {
  const ms = (samples: number[]) => `p50 ${Math.round(median(samples))} ms, max ${Math.round(Math.max(...samples))} ms`;
  return `ask → model turn ${ms(figures.askToTurnMs)}; ask → answer ${ms(figures.askToAnswerMs)}; ${figures.turnsPerAsk.toFixed(1)} model requests per ask`;
}
