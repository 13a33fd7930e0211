/**
 * The scripted agent (no model) follows the instructions and the recipes literally
 * through real processes, in each of the four ways of being woken, while a simulated
 * app in another server process asks three questions at random moments. Every answer
 * must arrive, in order, exactly once; the time from each ask to its answer is printed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, tempDataDir } from "./helpers.js";
import { ScriptedAgent, type AgentReport, type RunOptions, type WakeMode } from "./fixtures/scripted-agent.js";
import { startSimulatedApp, type AppOutcome } from "./fixtures/simulated-app.js";

const QUESTIONS = ["What does “the queue is the truth” mean?", "Why pull after every push?", "Who reads the ui queue?"];

interface Session {
  report: AgentReport;
  outcome: AppOutcome;
}

/** One whole session: two server processes, the agent opening the reader, the app asking. */
async function session(mode: WakeMode, options: Partial<RunOptions> = {}, prepare?: (agent: Client) => void): Promise<Session> {
  const { dir, cleanup } = await tempDataDir();
  const [agentClient, appClient] = await Promise.all([connectServer(dir), connectServer(dir)]);
  try {
    prepare?.(agentClient);
    const agent = await ScriptedAgent.open(agentClient, { BACKCHANNEL_HOME: dir });
    const app = startSimulatedApp(appClient, agent.channelId, { questions: QUESTIONS });
    const [report] = await Promise.all([agent.run(mode, { asks: QUESTIONS.length, ...options }), app.answered]);
    return { report, outcome: await app.finish() };
  } finally {
    await Promise.all([agentClient.close(), appClient.close()]);
    await cleanup();
  }
}

/** The checks every mode must pass, and the timing line. */
function assertConversation({ report, outcome }: Session): string {
  assert.equal(outcome.asked.length, QUESTIONS.length);
  assert.deepEqual(
    outcome.answers.map((answer) => answer.threadId),
    outcome.asked,
    "one answer per question, in the order asked, none twice",
  );
  outcome.answers.forEach((answer, index) => assert.match(answer.text, new RegExp(QUESTIONS[index]!.slice(0, 12))));
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

test("exit mode: the watcher open_reader returned, as a background command; poll on exit, answer, re-arm", async (t) => {
  const result = await session("exit");
  t.diagnostic(`exit mode: ${assertConversation(result)}`);
  assert.ok(result.report.wakes >= 2, "woken for ready and again after re-arming");
});

test("follow mode: one watcher line per message; poll on each line", async (t) => {
  const result = await session("follow");
  t.diagnostic(`follow mode: ${assertConversation(result)}`);
});

test("long-poll mode: poll_agent_messages with wait_ms and a progress token gets progress while it waits", async (t) => {
  const errors: Error[] = [];
  const result = await session("long-poll", { progressToken: true }, (agent) => (agent.onerror = (error) => errors.push(error)));
  t.diagnostic(`long-poll mode: ${assertConversation(result)}`);
  const waited = result.report.pollMs.filter((ms) => ms > 50).length;
  assert.ok(waited >= 1, `some poll waited (${result.report.pollMs.map((ms) => ms.toFixed(0)).join(", ")} ms)`);
  assert.ok(result.report.progress >= waited, `${result.report.progress} progress notifications for ${waited} polls that waited`);
  assert.deepEqual(errors, [], "no progress notification with an unknown token");
});

test("long-poll mode without a progress token: no progress notification at all", async (t) => {
  let progress = 0;
  const result = await session("long-poll", { progressToken: false }, (agent) =>
    // Replaces the SDK's own progress routing: this client never asks for progress, so anything arriving is a stray.
    agent.setNotificationHandler("notifications/progress", () => void (progress += 1)),
  );
  t.diagnostic(`long-poll mode, no token: ${assertConversation(result)}`);
  assert.ok(result.report.pollMs.some((ms) => ms > 50), "some poll waited");
  assert.equal(progress, 0);
});

test("timer mode: poll_agent_messages every 250 ms, as /loop would every minute", async (t) => {
  const result = await session("timer", { timerMs: 250 });
  t.diagnostic(`timer mode (250 ms): ${assertConversation(result)}`);
});
