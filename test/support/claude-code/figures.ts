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

/** When one ask of a sequential run happened (all `performance.now()`). */
export interface AskTimes {
  /** The app's `notify_agent` of the ask returned. */
  askedAt: number;
  /** Its answer reached the app. */
  answeredAt: number;
  /** The last model request of the turn that answered it arrived (the one the model ended the turn on). */
  endedAt: number;
  /** The idle stretch after it ended here: the next ask, or the end of the run. */
  quietUntil: number;
}

/** The figures of one ask. */
export interface AskFigures {
  /** ms from the ask to the first model request at or after it (the wake); NaN when none came. */
  askToTurnMs: number;
  /** ms from the ask to its answer at the app. */
  askToAnswerMs: number;
  /** Model requests from the ask to the end of its turn, both included. */
  requests: number;
  /** Model requests after its turn ended and before `quietUntil`: turns no message caused. */
  idleRequests: number;
}

/**
 * The figures of each ask of a run in which asks come one at a time (the next only once
 * the last one's turn has ended), read against the arrival times of every main-loop
 * model request (`requestTimes`, in any order).
 * @throws RangeError when an ask's times are out of order (answered or ended before it was asked, quiet before it ended).
 * The answer may reach the app just after the turn's last request: it is not checked against `endedAt`.
 */
export function askFigures(requestTimes: readonly number[], asks: readonly AskTimes[]): AskFigures[] {
  const times = [...requestTimes].sort((a, b) => a - b);
  return asks.map((ask, index) => {
    if (!(ask.askedAt <= ask.answeredAt && ask.askedAt <= ask.endedAt && ask.endedAt <= ask.quietUntil))
      throw new RangeError(`ask ${index + 1}: its times are out of order (${JSON.stringify(ask)})`);
    const wake = times.find((at) => at >= ask.askedAt);
    return {
      askToTurnMs: wake === undefined ? Number.NaN : wake - ask.askedAt,
      askToAnswerMs: ask.answeredAt - ask.askedAt,
      requests: times.filter((at) => at >= ask.askedAt && at <= ask.endedAt).length,
      idleRequests: times.filter((at) => at > ask.endedAt && at < ask.quietUntil).length,
    };
  });
}

/**
 * How many times Claude Code's floor a path's ask → answer takes: the median ask →
 * answer over (the floor's median per-request round trip × the model requests the path
 * needs before the answer is sent, the wake included).
 * @throws RangeError when `turns` is not a positive whole number or a list is empty.
 */
export function floorMultiple(askToAnswerMs: readonly number[], floorMs: readonly number[], turns: number): number {
  if (!Number.isInteger(turns) || turns < 1) throw new RangeError(`turns must be a whole number ≥ 1, not ${turns}`);
  if (askToAnswerMs.length === 0 || floorMs.length === 0) throw new RangeError("no samples to compare");
  return median(askToAnswerMs) / (median(floorMs) * turns);
}
