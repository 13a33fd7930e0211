/**
 * The scripted agent (no model) follows the instructions and the recipes literally
 * through real processes, in each of the four ways of being woken, while a simulated
 * app in another server process asks three questions at random moments. Every answer
 * must arrive, in order, exactly once; the time from each ask to its answer is printed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, tempDataDir } from "./support/helpers.js";
import { ScriptedAgent, type AgentReport, type RunOptions, type WakeMode } from "./support/scripted-agent.js";
import { startSimulatedApp, type AppOutcome } from "./support/simulated-app.js";

/** In long-poll mode questions come 500–1,500 ms apart, so polls wait; one that took this long surely did. */
const LONG_POLL_GAP_MS = 500;
const WAITED_MS = 300;
/** A safety net only: a session takes a few seconds. */
const TIMEOUT = { timeout: 120_000 };

const QUESTIONS = ["What does “the queue is the truth” mean?", "Why pull after every push?", "Who reads the ui queue?"];

interface Session {
  questions: string[];
  report: AgentReport;
  outcome: AppOutcome;
}

/** Options of {@link session}. */
interface SessionOptions {
  /** Options of the agent's loop. */
  run?: Partial<RunOptions>;
  /** Called with the agent's client before it opens the reader. */
  prepare?: (agent: Client) => void;
  /** The questions the app asks. Default: three. */
  questions?: string[];
  /** The shortest wait before a question. Default 100 ms. */
  minDelayMs?: number;
  /** The longest wait before a question. Default 1,500 ms. */
  maxDelayMs?: number;
}

/** One whole session: two server processes, the agent opening the reader, the app asking. */
async function session(mode: WakeMode, options: SessionOptions = {}): Promise<Session> {
  const { run = {}, prepare, questions = QUESTIONS, minDelayMs = 100, maxDelayMs = 1500 } = options;
  const { dir, cleanup } = await tempDataDir();
  const [agentClient, appClient] = await Promise.all([connectServer(dir), connectServer(dir)]);
  try {
    prepare?.(agentClient);
    const agent = await ScriptedAgent.open(agentClient, { BACKCHANNEL_HOME: dir });
    const app = startSimulatedApp(appClient, agent.channelId, { questions, minDelayMs, maxDelayMs });
    const [report] = await Promise.all([agent.run(mode, { asks: questions.length, ...run }), app.answered]);
    return { questions, report, outcome: await app.finish() };
  } finally {
    await Promise.all([agentClient.close(), appClient.close()]);
    await cleanup();
  }
}

/** The checks every mode must pass, and the timing line. */
function assertConversation({ questions, report, outcome }: Session): string {
  assert.equal(outcome.asked.length, questions.length);
  assert.deepEqual(
    outcome.answers.map((answer) => answer.threadId),
    outcome.asked,
    "one answer per question, in the order asked, none twice",
  );
  outcome.answers.forEach((answer, index) => assert.match(answer.text, new RegExp(questions[index]!.slice(0, 12))));
  assert.equal(outcome.hellos, 1, "ready got exactly one hello");
  assert.deepEqual(report.answered, outcome.asked);
  const ms = outcome.latenciesMs.map((latency) => latency.toFixed(0)).join(", ");
  return `ask→answer median ${median(outcome.latenciesMs).toFixed(0)} ms (each: ${ms}; asked after ${outcome.delaysMs.join(", ")} ms; ${report.wakes} wakes)`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

test("exit mode: the watcher open_reader returned, as a background command; poll on exit, answer, re-arm", TIMEOUT, async (t) => {
  const result = await session("exit");
  t.diagnostic(`exit mode: ${assertConversation(result)}`);
  assert.ok(result.report.wakes >= 2, "woken for ready and again after re-arming");
});

test("follow mode: one watcher line per message; poll on each line", TIMEOUT, async (t) => {
  const result = await session("follow");
  t.diagnostic(`follow mode: ${assertConversation(result)}`);
});

test("follow mode, a burst: eight questions at once are all answered, in order, once", TIMEOUT, async (t) => {
  const questions = Array.from({ length: 8 }, (_, index) => `Burst question ${index + 1}?`);
  const result = await session("follow", { questions, minDelayMs: 0, maxDelayMs: 0 });
  t.diagnostic(`follow mode, burst: ${assertConversation(result)}`);
});

test("long-poll mode: poll_agent_messages with wait_ms and a progress token gets progress while it waits", TIMEOUT, async (t) => {
  const errors: Error[] = [];
  const result = await session("long-poll", {
    run: { progressToken: true },
    prepare: (agent) => (agent.onerror = (error) => errors.push(error)),
    minDelayMs: LONG_POLL_GAP_MS,
  });
  t.diagnostic(`long-poll mode: ${assertConversation(result)}`);
  const polls = result.report.polls.map(({ ms, progress }) => `${ms.toFixed(0)} ms: ${progress}`).join(", ");
  // A waiting poll reports progress as its wait begins.
  assert.ok(
    result.report.polls.some(({ progress }) => progress > 0),
    `progress arrived (${polls})`,
  );
  for (const { ms, progress } of result.report.polls) assert.ok(ms < WAITED_MS || progress > 0, `a poll that waited got progress (${polls})`);
  assert.deepEqual(errors, [], "no progress notification with an unknown token");
});

test("long-poll mode without a progress token: no progress notification at all", TIMEOUT, async (t) => {
  let progress = 0;
  const result = await session("long-poll", {
    run: { progressToken: false },
    // Replaces the SDK's own progress routing: this client never asks for progress, so anything arriving is a stray.
    prepare: (agent) =>
      agent.setNotificationHandler("notifications/progress", () => {
        progress += 1;
      }),
    minDelayMs: LONG_POLL_GAP_MS,
  });
  t.diagnostic(`long-poll mode, no token: ${assertConversation(result)}`);
  assert.ok(
    result.report.polls.some(({ ms }) => ms >= WAITED_MS),
    "some poll waited",
  );
  assert.equal(progress, 0);
});

test("timer mode: poll_agent_messages every 250 ms, as /loop would every minute", TIMEOUT, async (t) => {
  const result = await session("timer", { run: { timerMs: 250 } });
  t.diagnostic(`timer mode (250 ms): ${assertConversation(result)}`);
});
