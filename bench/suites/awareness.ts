/**
 * Figures 9 and 10: how the agent and the human learn that something waits, for
 * backchannel alone (the polling baseline has no status line and no push; see
 * ../solo.ts).
 *
 * 9. The status line: `backchannel statusline` as a whole process (spawn → exit), as
 *    Claude Code runs it every few seconds, with a bare `node -e 0` measured in the
 *    same rounds as its floor (./awareness-statusline.ts).
 * 10. Push latency: from the app's `notify_agent` of an `ask` to the agent's client
 *    hearing `notifications/tools/list_changed` (the tool-description notify), or
 *    `notifications/claude/channel` (the Claude Code channel push) (./awareness-push.ts).
 */
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { measurePush } from "./awareness-push.js";
import { measureStatusline, STRIPPED_ENV } from "./awareness-statusline.js";

/** How many samples each part takes. */
export interface AwarenessPlan {
  /** Status line rounds; each runs a bare node, the silent and the busy status line once. */
  statuslineRounds: number;
  /** Samples of each push kind (list_changed, channel push). */
  pushes: number;
}

/** What the exit-mode watcher is, for the push figures' "read against" (measured by the wake suite only). */
const WAKE_BASELINE = "exit-mode watcher wake (wake suite, wake.exit; not measured again here)";

/** Measures the status line and the pushes. */
export async function awarenessFigures(plan: AwarenessPlan, ctx: RunContext): Promise<SoloFigure[]> {
  ctx.log("awareness: status line");
  const status = await measureStatusline(plan.statuslineRounds, ctx);
  ctx.log("awareness: tools/list_changed and channel push");
  const push = await measurePush(plan.pushes, ctx);
  const floor = { name: "bare node -e 0", samples: status.bare };
  // Recorded with the floor: without it, the JSON would not say why its figures differ from a plain shell's.
  const envRemoved = STRIPPED_ENV.filter((name) => process.env[name] !== undefined).join(" ") || "none";
  const ms = (key: string, name: string, samples: number[], against?: SoloFigure["against"]): SoloFigure => ({
    key,
    name,
    unit: "ms",
    solo: true,
    samples,
    ...(against && { against }),
  });
  return [
    ms("awareness.statusline.silent", "status line, nothing waiting: spawn → exit", status.silent, floor),
    ms("awareness.statusline.busy", "status line, 3 readers × 2 asks + wall: spawn → exit", status.busy, floor),
    { ...ms("awareness.node", "bare node -e 0: spawn → exit (the floor)", status.bare), details: { envRemoved } },
    ms("awareness.statusline.silent.overNode", "status line − bare node, same round, nothing waiting", status.silentOverBare),
    ms("awareness.statusline.busy.overNode", "status line − bare node, same round, 6 asks + wall", status.busyOverBare),
    ms("awareness.listChanged", "list_changed: notify_agent returns → agent's client has it", push.listChanged.fromReturn, { name: WAKE_BASELINE }),
    ms("awareness.listChanged.fromCall", "list_changed: notify_agent called → agent's client has it", push.listChanged.fromCall),
    ms("awareness.push", "channel push: notify_agent returns → agent's client has it", push.channel.fromReturn, { name: WAKE_BASELINE }),
    ms("awareness.push.fromCall", "channel push: notify_agent called → agent's client has it", push.channel.fromCall),
  ];
}
