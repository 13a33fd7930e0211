/**
 * The wake paths of the Claude Code suite, each run in the real Claude Code (the harness
 * of test/support/claude-code/) against a scripted model that answers at once, so that
 * every millisecond measured is Claude Code's and backchannel's:
 *
 * - `exit`: the watcher in background Bash, as backchannel's instructions write it
 *   (woken by the task notification of its exit → poll → notify_ui and re-arm → end);
 * - `monitor`: `watch --follow` under the Monitor tool, as the background-watcher recipe
 *   writes it (woken by a line → poll → notify_ui → end);
 * - `plugin`: `claude --plugin-dir plugin/`, the model arming nothing (woken by the Stop
 *   hook's reminder → notify_ui with ack → end).
 *
 * The app is an SDK client on its own server process. It says `ready` (as the reader
 * does when it loads), waits until the session has settled, then asks one question at a
 * time: the next only once the last one's turn has ended and a random idle stretch has
 * passed, so that each model request belongs to one ask or to an idle stretch.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { RunContext } from "../figures.js";
import type { AskTimes } from "../../test/support/claude-code/figures.js";
import { type Policy, type Reply, startModelServer, type Turn } from "../../test/support/claude-code/model-server.js";
import { nextWake } from "../../test/support/claude-code/next-wake.js";
import { PLUGIN_ROOT, pluginPolicy, pluginTool, waitForWatcher } from "../../test/support/claude-code/plugin-policy.js";
import { hostTool, readerLoopPolicy } from "../../test/support/claude-code/reader-policy.js";
import { type ClaudeOptions, startSession } from "../../test/support/claude-code/session.js";
import { connectServer, structured } from "../../test/support/helpers.js";
import { type ClaimLog, logClaims } from "./claude-code-claims.js";

/** A wake path of the suite. */
export type PathName = "exit" | "monitor" | "plugin";

/** What a path is, and the model requests it truly needs per ask. */
export interface PathSpec {
  name: PathName;
  /** For the table. */
  label: string;
  /** Requests up to the one whose reply sends the answer, the wake included. */
  turnsToAnswer: number;
  /** Requests of a whole ask: those, and the one the turn ends on. */
  turnsPerAsk: number;
}

/** The paths, in the order they run. */
export const PATHS: readonly PathSpec[] = [
  { name: "exit", label: "background Bash, exit-mode watcher", turnsToAnswer: 2, turnsPerAsk: 3 },
  { name: "monitor", label: "Monitor, watch --follow", turnsToAnswer: 2, turnsPerAsk: 3 },
  { name: "plugin", label: "plugin (Stop hook, asyncRewake)", turnsToAnswer: 1, turnsPerAsk: 2 },
];

/** How a path is run. */
export interface PathPlan {
  asks: number;
  /** Each idle stretch before an ask (and after the last) lasts a random time in this range, ms. */
  gapMs: readonly [number, number];
}

/** What one path's run recorded. */
export interface PathRun {
  asks: AskTimes[];
  /** Arrival times of every main-loop model request. */
  requestTimes: number[];
  /** Requests from the first prompt until the session settled (reader open, `ready` handled). */
  setupRequests: number;
  /** The idle stretch between settling and the first ask. */
  firstQuiet: { from: number; to: number };
  /**
   * The plugin only, per ask: when its wake hook announced the wake (wrote its claim
   * with the ask's seq), and when it gave the claim up just before exiting 2
   * (claude-code-claims.ts); NaN where the log saw neither.
   */
  hook?: { announcedAt: number[]; releasedAt: number[] };
}

/** Longest any one step (the session's start, an answer, a turn's end) may take before the run fails. */
const STEP_TIMEOUT_MS = 120_000;

/**
 * Runs `spec` with `plan.asks` asks.
 * @throws when a step takes longer than {@link STEP_TIMEOUT_MS}, when the model server
 *   met a policy error, or when an answer is not the one asked for.
 */
export async function runPath(spec: PathSpec, plan: PathPlan, ctx: RunContext): Promise<PathRun> {
  const dataDir = await mkdtemp(join(ctx.root, `claude-code-${spec.name}-`));
  const setup = pathSetup(spec.name);
  const ends = turnEnds(setup.policy);
  const model = await startModelServer(ends.policy);
  const claims: ClaimLog | undefined = spec.name === "plugin" ? await logClaims(dataDir) : undefined;
  const session = await startSession({ model, dataDir, ...setup.claude });
  let app: Client | undefined;
  try {
    session.send("Open the reader so that I can ask about a text.");
    const channelId = await within(setup.opened(model.waitForTurn), "the reader to open");
    app = await connectServer(dataDir);
    const reader = new AppReader(app, channelId);
    await reader.send("ready", {});
    if (spec.name === "plugin") {
      // The reader's ready rings no bell with the plugin: settled once the wake hook listens.
      await within(ends.after(0), "the turn that opened the reader to end");
      await waitForWatcher(dataDir, STEP_TIMEOUT_MS);
    } else {
      await within(
        reader.next((event) => event === "hello"),
        "the hello",
      );
      // The request that carried notify_ui's result is the hello's turn's last or near it (the open's turn ended before).
      const said = await model.waitForTurn((turn) => turn.result(hostTool("notify_ui")) !== undefined, { timeoutMs: STEP_TIMEOUT_MS });
      await within(ends.after(said.at), "the turn that said hello to end");
    }
    const setupRequests = model.turns().length;
    const asks: AskTimes[] = [];
    const seqs: number[] = [];
    const settledAt = performance.now();
    for (let index = 0; index < plan.asks; index++) {
      await pause(plan.gapMs);
      const thread = `t-${index + 1}`;
      const question = `Question ${index + 1}?`;
      const seq = await reader.send("ask", { thread_id: thread, quote: "The queue is the truth.", paragraph: "", question, history: [] });
      const askedAt = performance.now();
      if (index > 0) asks[index - 1]!.quietUntil = askedAt;
      const answer = await within(
        reader.next((event, data) => event === "answer" && (data as { thread_id?: string }).thread_id === thread),
        `the answer to ${thread}`,
      );
      const endedAt = await within(ends.after(askedAt), `the turn that answered ${thread} to end`);
      asks.push({ askedAt, answeredAt: answer.at, endedAt, quietUntil: Number.NaN });
      seqs.push(seq);
    }
    await pause(plan.gapMs);
    asks[asks.length - 1]!.quietUntil = performance.now();
    if (model.errors.length > 0) throw new Error(`the scripted model failed: ${model.errors.map(String).join("; ")}`);
    ctx.log(`claude-code ${spec.name}: ${plan.asks} asks answered (${model.turns().length} model requests, ${setupRequests} to settle)`);
    return {
      asks,
      requestTimes: model.turns().map((turn) => turn.at),
      setupRequests,
      firstQuiet: { from: settledAt, to: asks[0]?.askedAt ?? settledAt },
      ...(claims && {
        hook: {
          announcedAt: seqs.map((seq) => claims.announcedAt(channelId, seq)),
          releasedAt: seqs.map((seq) => claims.releasedAt(channelId, seq)),
        },
      }),
    };
  } finally {
    claims?.close();
    await app?.close();
    await session.stop();
    await model.close();
  }
}

/** A path's policy, how it learns the channel, and how its session is configured. */
interface PathSetup {
  policy: Policy;
  /** Resolves with the channel once open_reader has answered; given the model server's wait. */
  opened(waitForTurn: (match: (turn: Turn) => boolean, options?: { timeoutMs?: number }) => Promise<Turn>): Promise<string>;
  claude: Omit<ClaudeOptions, "model" | "dataDir">;
}

function pathSetup(name: PathName): PathSetup {
  if (name === "plugin") {
    return {
      policy: pluginPolicy(),
      async opened(waitForTurn) {
        const turn = await waitForTurn((candidate) => candidate.result(pluginTool("open_reader")) !== undefined, { timeoutMs: STEP_TIMEOUT_MS });
        const text = turn.result(pluginTool("open_reader"))!.text;
        const channel = /"channel_id":"([\w-]+)"/.exec(text)?.[1];
        if (!channel) throw new Error(`open_reader named no channel: ${text.slice(0, 200)}`);
        return channel;
      },
      claude: { configure: "none", args: ["--plugin-dir", PLUGIN_ROOT], allowedTools: ["mcp__plugin_backchannel_backchannel", "ToolSearch"] },
    };
  }
  const loop = readerLoopPolicy({ wake: name });
  return { policy: loop.policy, opened: async () => (await loop.opened).channelId, claude: {} };
}

/**
 * The times at which the model ended a turn (the arrival of each request it answered
 * with text alone), and a wait for the first one at or after a moment.
 */
function turnEnds(policy: Policy): { policy: Policy; after(at: number): Promise<number> } {
  const ends: number[] = [];
  const waiters = new Set<() => void>();
  return {
    async policy(turn) {
      const reply = await policy(turn);
      if (endsTurn(reply)) {
        ends.push(turn.at);
        for (const wake of waiters) wake();
      }
      return reply;
    },
    async after(at) {
      for (;;) {
        const found = ends.find((end) => end >= at);
        if (found !== undefined) return found;
        await nextWake(waiters, STEP_TIMEOUT_MS);
      }
    },
  };
}

/** Whether a reply ends the turn: no tool call in it (the model server sends `undefined` as a text). */
function endsTurn(reply: Reply): boolean {
  if (reply === undefined) return true;
  return (Array.isArray(reply) ? reply : [reply]).every((action) => "text" in action);
}

/** The app's side: sends with notify_agent, reads with long-polls of poll_ui_messages from a cursor. */
class AppReader {
  private cursor = 0;
  private readonly seen: { event: string; data: unknown; at: number }[] = [];

  constructor(
    private readonly client: Client,
    private readonly channelId: string,
  ) {}

  /** Sends `event` with notify_agent; resolves with its seq. */
  async send(event: string, data: Record<string, unknown>): Promise<number> {
    return structured<{ seq: number }>(await this.client.callTool({ name: "notify_agent", arguments: { channel_id: this.channelId, event, data } }))
      .seq;
  }

  /** The first message not yet returned that `match` accepts, with `performance.now()` when its poll returned. */
  async next(match: (event: string, data: unknown) => boolean): Promise<{ at: number }> {
    for (;;) {
      const index = this.seen.findIndex((message) => match(message.event, message.data));
      if (index >= 0) return this.seen.splice(index, 1)[0]!;
      const polled = structured<{ messages: { event: string; data: unknown }[]; cursor: number }>(
        await this.client.callTool({ name: "poll_ui_messages", arguments: { channel_id: this.channelId, after: this.cursor, wait_ms: 30_000 } }),
      );
      const at = performance.now();
      this.cursor = polled.cursor;
      for (const message of polled.messages) this.seen.push({ event: message.event, data: message.data, at });
    }
  }
}

/** A random pause within `[min, max]` ms: users ask when they like. */
function pause([min, max]: readonly [number, number]): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, min + Math.random() * (max - min)));
}

/**
 * `promise`, or a rejection naming `what` after {@link STEP_TIMEOUT_MS}.
 * @throws Error "timed out waiting for <what>".
 */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${STEP_TIMEOUT_MS / 1000} s waiting for ${what}`)), STEP_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
