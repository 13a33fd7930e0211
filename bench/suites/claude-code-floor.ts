/**
 * Claude Code's own floor: the per-request overhead of the real Claude Code with a
 * scripted model that answers at once, measured in a session of its own. Each sample is
 * one turn of the same shape as an ask's: a user message → the model runs Bash `true` →
 * its result → the model calls backchannel's `notify_ui` (the tool that answers an ask)
 * → its result → the end of the turn. The clock reads request arrivals at the model
 * server, so each round trip is: the reply streamed, Claude Code runs the tool, builds
 * and sends the next request.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { RunContext } from "../figures.js";
import { startModelServer, type Turn } from "../../test/support/claude-code/model-server.js";
import { hostTool } from "../../test/support/claude-code/reader-policy.js";
import { startSession } from "../../test/support/claude-code/session.js";

/** The floor's samples, ms. */
export interface FloorSamples {
  /** The user message written to Claude Code's stdin → its first request. */
  promptToRequest: number[];
  /** Request → next request around a Bash `true`. */
  bash: number[];
  /** Request → next request around backchannel's notify_ui (an MCP tool call). */
  mcp: number[];
}

const PROMPT = "Floor sample";
/** Longest one sample may take before the run fails. */
const SAMPLE_TIMEOUT_MS = 120_000;

/**
 * Takes `samples` samples, after one unrecorded one (the reader is opened in a first turn of its own).
 * @throws when a sample takes longer than {@link SAMPLE_TIMEOUT_MS} or the scripted model failed.
 */
export async function measureFloor(samples: number, ctx: RunContext): Promise<FloorSamples> {
  const dataDir = await mkdtemp(join(ctx.root, "claude-code-floor-"));
  let channelId = "";
  const model = await startModelServer((turn: Turn) => {
    const opened = turn.result(hostTool("open_reader"));
    if (opened) {
      channelId = /"channel_id":"([\w-]+)"/.exec(opened.text)?.[1] ?? "";
      if (!channelId) throw new Error(`open_reader named no channel: ${opened.text.slice(0, 200)}`);
      return { text: "Open." };
    }
    if (turn.result("Bash")) {
      return {
        tool: hostTool("notify_ui"),
        input: { channel_id: channelId, event: "answer", data: { thread_id: `floor-${turn.index}`, text: "." } },
      };
    }
    if (turn.result(hostTool("notify_ui"))) return { text: "Done." };
    if (turn.index === 0) return { tool: hostTool("open_reader"), input: { title: "Floor", markdown: "# Floor\n\nA line." } };
    if (turn.lastText.includes(PROMPT)) return { tool: "Bash", input: { command: "true", description: "nothing" } };
    return { text: "Nothing to do." };
  });
  const session = await startSession({ model, dataDir });
  const floor: FloorSamples = { promptToRequest: [], bash: [], mcp: [] };
  try {
    session.send("Open a reader.");
    await session.waitForEvent((event) => event.type === "result", { timeoutMs: SAMPLE_TIMEOUT_MS });
    for (let index = -1; index < samples; index++) {
      const from = model.turns().length;
      const events = session.events.length;
      // The turn before has ended (Claude Code printed its result), so this prompt starts a new one.
      const sentAt = performance.now();
      session.send(`${PROMPT} ${index + 1}.`);
      const first = await model.waitForTurn((turn) => turn.lastText.includes(PROMPT), { from, timeoutMs: SAMPLE_TIMEOUT_MS });
      const bash = await model.waitForTurn((turn) => turn.result("Bash") !== undefined, { from, timeoutMs: SAMPLE_TIMEOUT_MS });
      const mcp = await model.waitForTurn((turn) => turn.result(hostTool("notify_ui")) !== undefined, { from, timeoutMs: SAMPLE_TIMEOUT_MS });
      await session.waitForEvent((event) => event.type === "result", { from: events, timeoutMs: SAMPLE_TIMEOUT_MS });
      if (index < 0) continue;
      floor.promptToRequest.push(first.at - sentAt);
      floor.bash.push(bash.at - first.at);
      floor.mcp.push(mcp.at - bash.at);
    }
    if (model.errors.length > 0) throw new Error(`the scripted model failed: ${model.errors.map(String).join("; ")}`);
    ctx.log(`claude-code floor: ${samples} samples`);
    return floor;
  } finally {
    await session.stop();
    await model.close();
  }
}
