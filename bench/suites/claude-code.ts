/**
 * Figure 15: the reader loop in the real Claude Code, per wake path, side by side in one
 * run (claude-code-paths.ts), read against Claude Code's own floor measured in the same
 * run (claude-code-floor.ts). Per path: ask → the model's next request (the wake), ask →
 * answer at the app, model requests per ask, and idle requests (requests in the quiet
 * stretches between asks, which no message caused). Ask → answer is read against
 * "floor × the requests the path needs before the answer is sent", the floor being
 * Claude Code's request → next request round trip around an MCP tool call; issue 25's
 * target is at most 2× that. The arithmetic is test/support/claude-code/figures.ts
 * (checked by test/unit/claude-code-figures.test.ts).
 *
 * Needs the pinned Claude Code (`npm run claude-code:install`); without it the suite is
 * left out with a note.
 */
import type { RunContext } from "../figures.js";
import { type SoloFigure, soloFigure as solo } from "../solo.js";
import { askFigures, floorMultiple } from "../../test/support/claude-code/figures.js";
import { claudeCodeSkipReason } from "../../test/support/claude-code/install.js";
import { measureFloor } from "./claude-code-floor.js";
import { PATHS, type PathPlan, type PathSpec, runPath } from "./claude-code-paths.js";

/** What a mode runs. */
export interface ClaudeCodePlan extends PathPlan {
  /** Floor samples (turns of one Bash `true` and one notify_ui each). */
  floorSamples: number;
}

/** The floor figures, then four per path. */
export async function claudeCodeFigures(plan: ClaudeCodePlan, ctx: RunContext): Promise<SoloFigure[]> {
  const skip = claudeCodeSkipReason();
  if (skip) {
    ctx.log(`claude-code: left out: ${skip}`);
    return [];
  }
  ctx.log(`claude-code: the floor, ${plan.floorSamples} turns`);
  const floor = await measureFloor(plan.floorSamples, ctx);
  const figures: SoloFigure[] = [
    solo("claude-code.floor.prompt", "Claude Code floor: user message → its request", floor.promptToRequest),
    solo("claude-code.floor.bash", "Claude Code floor: request → next, around Bash `true`", floor.bash),
    solo("claude-code.floor.mcp", "Claude Code floor: request → next, around notify_ui", floor.mcp),
  ];
  for (const spec of PATHS) {
    ctx.log(`claude-code: ${spec.label}, ${plan.asks} asks`);
    figures.push(...pathFigures(spec, await runPath(spec, plan, ctx), floor.mcp));
  }
  return figures;
}

function pathFigures(spec: PathSpec, run: Awaited<ReturnType<typeof runPath>>, floorMs: number[]): SoloFigure[] {
  const asks = askFigures(run.requestTimes, run.asks);
  const askToAnswer = asks.map((ask) => ask.askToAnswerMs);
  const firstIdle = run.requestTimes.filter((at) => at > run.firstQuiet.from && at < run.firstQuiet.to).length;
  const turns = spec.turnsToAnswer;
  const key = `claude-code.${spec.name}`;
  const details = { setupRequests: run.setupRequests, turnsToAnswer: turns, turnsPerAsk: spec.turnsPerAsk };
  const hook = run.hook
    ? [
        solo(
          `${key}.askToHook`,
          `${spec.label}: ask → the hook announces its wake`,
          run.hook.announcedAt.map((at, index) => at - run.asks[index]!.askedAt),
        ),
        solo(
          `${key}.hookToTurn`,
          `${spec.label}: the hook gives up its claim (then exits 2) → model request`,
          run.hook.releasedAt.map((at, index) => asks[index]!.askToTurnMs + run.asks[index]!.askedAt - at),
        ),
      ]
    : [];
  return [
    solo(
      `${key}.askToTurn`,
      `${spec.label}: ask → model request`,
      asks.map((ask) => ask.askToTurnMs),
    ),
    {
      ...solo(`${key}.askToAnswer`, `${spec.label}: ask → answer at the app`, askToAnswer),
      // Scaled, so that the table's ratio of medians is the floor multiple.
      against: { name: `floor × ${turns} request${turns > 1 ? "s" : ""}`, samples: floorMs.map((ms) => ms * turns) },
      details: { ...details, floorMultiple: floorMultiple(askToAnswer, floorMs, turns) },
    },
    {
      ...solo(
        `${key}.requests`,
        `${spec.label}: model requests per ask`,
        asks.map((ask) => ask.requests),
        "requests",
      ),
      against: { name: `needed: ${spec.turnsPerAsk}` },
      details,
    },
    {
      ...solo(
        `${key}.idle`,
        `${spec.label}: idle requests (no message caused them)`,
        [firstIdle, ...asks.map((ask) => ask.idleRequests)],
        "requests",
      ),
      details: { ...details, idleStretches: asks.length + 1 },
    },
    ...hook,
  ];
}
