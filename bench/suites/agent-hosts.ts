/**
 * Figure 19: the reader loop in the real Codex CLI and Gemini CLI, each installed in its
 * one step (the harnesses of test/support/codex/ and test/support/gemini/), against a
 * scripted model that arms nothing and answers at once, read against each host's own
 * floor measured in the same run. Run it with Claude Code's figures in one run:
 * `npm run bench -- --only claude-code,agent-hosts`.
 *
 * Per host:
 * - the floor, the same turn shape as an ask's with a trivial tool, in a session of its
 *   own: request → next request around the host's shell tool running `true`, and around
 *   backchannel's `notify_ui` (the call that answers an ask); for Codex also a queued
 *   message → its request (`codex queue --resume`, the way Codex lets a turn start from
 *   outside, the one its waker uses);
 * - the path: ask → the model's request (the wake), ask → answer at the app (against the
 *   floor: Codex's queued message → request plus the notify_ui round trip; Gemini's
 *   notify_ui round trip, its hook's block starting the request inside the run), model
 *   requests per ask (two needed: the wake → notify_ui, its result → end), and requests
 *   in the idle stretches (none may come).
 *
 * Needs the pinned hosts (`npm run hosts:install`); a host that is missing is left out
 * with a note.
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { askFigures, median } from "../../test/support/claude-code/figures.js";
import { type CodexModel, startCodexModel } from "../../test/support/codex/model-server.js";
import { codexBinary, codexSkipReason, startCodexTui } from "../../test/support/codex/session.js";
import { type GeminiModel, startGeminiModel } from "../../test/support/gemini/model-server.js";
import { geminiSkipReason, runGemini } from "../../test/support/gemini/session.js";
import { connectServer } from "../../test/support/helpers.js";
import { type Ask, AskingApp, askOneByOne } from "../../test/support/host-loop.js";
import { type HostPolicy, type HostTurn, wakePolicy } from "../../test/support/host-turn.js";

/** What a mode runs. */
export interface AgentHostsPlan {
  /** Asks per host. */
  asks: number;
  /** Each idle stretch before an ask lasts a random time in this range, ms. */
  gapMs: readonly [number, number];
  /** Floor samples per host. */
  floorSamples: number;
}

/** A host of the suite. */
interface HostSpec {
  name: "codex" | "gemini";
  label: string;
  /** Its shell tool and the arguments that run `true`. */
  shell: { tool: string; input: Record<string, unknown> };
  skip(): string | undefined;
}

const HOSTS: readonly HostSpec[] = [
  {
    name: "codex",
    label: "Codex CLI 0.171 (install codex: Stop hook → waker → codex queue)",
    shell: { tool: "exec_command", input: { cmd: "true" } },
    skip: codexSkipReason,
  },
  {
    name: "gemini",
    label: "Gemini CLI 0.61 (extension: AfterAgent hook answering block)",
    shell: { tool: "run_shell_command", input: { command: "true", description: "nothing" } },
    skip: geminiSkipReason,
  },
];

/** Longest one step may take before the run fails. */
const STEP_TIMEOUT_MS = 120_000;

/** The floor's samples, ms. */
interface Floor {
  shell: number[];
  mcp: number[];
  /** Codex only: a queued message → its request. */
  queued: number[];
}

/** Per host: the floor's figures, then the path's. */
export async function agentHostsFigures(plan: AgentHostsPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const figures: SoloFigure[] = [];
  for (const host of HOSTS) {
    let skip: string | undefined;
    try {
      skip = host.skip();
    } catch (error) {
      skip = (error as Error).message;
    }
    if (skip) {
      ctx.log(`agent-hosts: ${host.name} left out: ${skip}`);
      continue;
    }
    ctx.log(`agent-hosts: ${host.name} floor, ${plan.floorSamples} samples`);
    const floor = await measureFloor(host, plan.floorSamples, ctx);
    ctx.log(`agent-hosts: ${host.name}, ${plan.asks} asks`);
    const asks = await runLoop(host, plan, ctx);
    figures.push(...hostFigures(host, floor, asks));
  }
  return figures;
}

/** One host's floor in a session of its own: a chain of shell `true` and notify_ui pairs in one turn, then (Codex) queued messages. */
async function measureFloor(host: HostSpec, samples: number, ctx: RunContext): Promise<Floor> {
  const dataDir = await mkdtemp(join(ctx.root, `agent-hosts-${host.name}-floor-`));
  let channel = "";
  let left = samples + 1; // one unrecorded pair first
  const policy: HostPolicy = (turn) => {
    const opened = turn.backchannelResult("open_reader");
    if (opened !== undefined) {
      channel = channelOf(opened);
      return { tool: host.shell.tool, input: host.shell.input };
    }
    if (turn.toolResult(host.shell.tool) !== undefined) {
      return { backchannel: "notify_ui", input: { channel_id: channel, event: "answer", data: { thread_id: `floor-${left}`, text: "." } } };
    }
    if (turn.backchannelResult("notify_ui") !== undefined) {
      left -= 1;
      return left > 0 ? { tool: host.shell.tool, input: host.shell.input } : { text: "Floor done." };
    }
    if (turn.index === 0) return { backchannel: "open_reader", input: { title: "Floor", markdown: "# Floor\n\nA line." } };
    return { text: "Queued floor." };
  };
  const floor: Floor = { shell: [], mcp: [], queued: [] };
  const read = (turns: HostTurn[]) => {
    for (const [index, turn] of turns.entries()) {
      const before = turns[index - 1];
      if (!before) continue;
      if (turn.toolResult(host.shell.tool) !== undefined) floor.shell.push(turn.at - before.at);
      if (turn.backchannelResult("notify_ui") !== undefined) floor.mcp.push(turn.at - before.at);
    }
    // The first pair is a warm-up.
    floor.shell.shift();
    floor.mcp.shift();
  };
  if (host.name === "codex") {
    const model = await startCodexModel(policy);
    const tui = await startCodexTui({ model, dataDir });
    try {
      await tui.submit("Open a reader, then run the floor.");
      for (let pair = 0, from = 0; pair <= samples; pair++) {
        const answered = await model.waitForTurn((turn) => turn.backchannelResult("notify_ui") !== undefined, { from, timeoutMs: STEP_TIMEOUT_MS });
        from = answered.index + 1;
      }
      read(model.turns());
      const thread = await tui.threadId();
      if (!thread) throw new Error("Codex wrote no session file");
      for (let index = 0; index <= samples; index++) {
        // The turn before has ended (its text reply came a while ago): the queued message starts a new one.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const from = model.turns().length;
        const started = performance.now();
        await runCodexQueue(tui.prepared.env, tui.prepared.cwd, thread, `Queued floor ${index}`);
        const turn = await model.waitForTurn((candidate) => candidate.sinceLastReply.includes(`Queued floor ${index}`), {
          from,
          timeoutMs: STEP_TIMEOUT_MS,
        });
        if (index > 0) floor.queued.push(turn.at - started);
      }
      return floor;
    } finally {
      await tui.stop();
      await model.close();
    }
  }
  const model = await startGeminiModel(policy);
  const run = await runGemini("Open a reader, then run the floor.", { model, dataDir });
  try {
    await run.waitForEvent((event) => event.type === "message" && String(event.content).includes("Floor done."), { timeoutMs: STEP_TIMEOUT_MS });
    read(model.turns());
    return floor;
  } finally {
    await run.stop();
    await model.close();
  }
}

/** `codex queue --thread <thread> --message <text> --resume`, as the waker runs it; resolves when it exits 0. */
function runCodexQueue(env: Record<string, string>, cwd: string, thread: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(codexBinary(), ["queue", "--thread", thread, "--message", text, "--resume"], { env, cwd, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`codex queue exited ${code}`))));
  });
}

/** The path: the reader opened, then `plan.asks` asks one at a time, each after a random idle stretch. */
async function runLoop(host: HostSpec, plan: AgentHostsPlan, ctx: RunContext): Promise<ReturnType<typeof askFigures>> {
  const dataDir = await mkdtemp(join(ctx.root, `agent-hosts-${host.name}-`));
  const prompt = "Open the reader on my notes.";
  if (host.name === "codex") {
    const model = await startCodexModel(wakePolicy());
    const tui = await startCodexTui({ model, dataDir });
    try {
      await tui.submit(prompt);
      return await askAll(host, model, dataDir, plan, ctx);
    } finally {
      await tui.stop();
      await model.close();
    }
  }
  const model = await startGeminiModel(wakePolicy());
  const run = await runGemini(prompt, { model, dataDir });
  try {
    return await askAll(host, model, dataDir, plan, ctx);
  } finally {
    await run.stop();
    await model.close();
  }
}

/** Once the reader is open: the app asks `plan.asks` questions, one at a time. */
async function askAll(host: HostSpec, model: CodexModel | GeminiModel, dataDir: string, plan: AgentHostsPlan, ctx: RunContext) {
  const opened = await model.waitForTurn((turn) => turn.backchannelResult("open_reader") !== undefined, { timeoutMs: STEP_TIMEOUT_MS });
  const channel = channelOf(opened.backchannelResult("open_reader")!);
  const asks: Ask[] = Array.from({ length: plan.asks }, (_, index) => ({
    thread: `t-${index + 1}`,
    question: `Question ${index + 1}?`,
    history: [],
  }));
  const gaps = asks.map(() => plan.gapMs[0] + Math.random() * (plan.gapMs[1] - plan.gapMs[0]));
  const app = await connectServer(dataDir);
  try {
    const times = await askOneByOne(new AskingApp(app, channel), model, asks, gaps, { lastQuietMs: plan.gapMs[0], stepTimeoutMs: STEP_TIMEOUT_MS });
    if (model.errors.length > 0) throw new Error(`the scripted model failed: ${model.errors.map(String).join("; ")}`);
    ctx.log(`agent-hosts ${host.name}: ${asks.length} asks answered (${model.turns().length} model requests)`);
    return askFigures(
      model.turns().map((turn) => turn.at),
      times,
    );
  } finally {
    await app.close();
  }
}

/** The channel an open_reader result names: as JSON (Codex shows structuredContent) or in its text (Gemini CLI). */
function channelOf(result: string): string {
  const channel = /"channel_id":"([\w-]+)"|on channel (ch-[\w-]+)/.exec(result)?.slice(1).find(Boolean);
  if (!channel) throw new Error(`open_reader named no channel: ${result.slice(0, 200)}`);
  return channel;
}

function hostFigures(host: HostSpec, floor: Floor, asks: ReturnType<typeof askFigures>): SoloFigure[] {
  const key = `agent-hosts.${host.name}`;
  const askToAnswer = asks.map((ask) => ask.askToAnswerMs);
  // The floor of an ask's answer: the turn started as the host lets one start from outside, then the notify_ui round trip.
  const against =
    host.name === "codex"
      ? {
          name: "floor: queued message → request + notify_ui round trip",
          samples: floor.queued.map((queued, index) => queued + (floor.mcp[index % floor.mcp.length] ?? Number.NaN)),
        }
      : { name: "floor: notify_ui round trip", samples: floor.mcp };
  const figures: SoloFigure[] = [
    solo(`${key}.floor.shell`, `${host.name} floor: request → next, around the shell running \`true\``, floor.shell),
    solo(`${key}.floor.mcp`, `${host.name} floor: request → next, around notify_ui`, floor.mcp),
  ];
  if (floor.queued.length > 0) figures.push(solo(`${key}.floor.queued`, `${host.name} floor: codex queue --resume → its request`, floor.queued));
  figures.push(
    solo(
      `${key}.askToTurn`,
      `${host.label}: ask → model request`,
      asks.map((ask) => ask.askToTurnMs),
    ),
    {
      ...solo(`${key}.askToAnswer`, `${host.label}: ask → answer at the app`, askToAnswer),
      against,
      details: { floorMultiple: median(askToAnswer) / median(against.samples) },
    },
    {
      ...solo(
        `${key}.requests`,
        `${host.label}: model requests per ask`,
        asks.map((ask) => ask.requests),
        "requests",
      ),
      against: { name: "needed: 2" },
    },
    solo(
      `${key}.idle`,
      `${host.label}: idle requests (no message caused them)`,
      asks.map((ask) => ask.idleRequests),
      "requests",
    ),
  );
  return figures;
}

function solo(key: string, name: string, samples: number[], unit = "ms"): SoloFigure {
  return { key, name, unit, solo: true, samples };
}
