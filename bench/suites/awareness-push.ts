/**
 * Figure 10: push latency. The app's server process calls `notify_agent` with an `ask`;
 * the clock stops when the agent's SDK client, on its own server process, hears
 * - `notifications/tools/list_changed`: the tool-description notify (the server
 *   debounces it 100 ms, so that is its floor), from a plain server; or
 * - `notifications/claude/channel`: the Claude Code channel push, from a server started
 *   with BACKCHANNEL_CLAUDE_CHANNEL=1.
 * The agent opens a reader (`open_reader`) to get the channel it watches, as a model
 * does. After each sample the agent drains the queue with `poll_agent_messages`, and
 * the next sample waits for the drain's own list_changed, so that each sample is one
 * change seen from a settled state. Each sample also checks what arrived: the push
 * names the seq sent, the description names the question, every push arrives once.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { BACKCHANNEL } from "../designs.js";
import type { RunContext } from "../figures.js";
import { assertExactlyOnce } from "../integrity.js";
import { startServer, type ServerProcess } from "../procs/server.js";
import { startSessionServer, type SessionServer } from "../procs/session-server.js";
import { pauseWithinPeriod } from "../timing.js";
import type { QueueMessage } from "../../protocol/message.js";

/** The latencies of one kind of notification, in ms. */
export interface PushLatencies {
  /** From `notify_agent` returning. */
  fromReturn: number[];
  /** From `notify_agent` being called (adds the send's own round trip and durable write). */
  fromCall: number[];
}

/** The samples of both kinds. */
export interface PushSamples {
  listChanged: PushLatencies;
  channel: PushLatencies;
}

/** The agent's Claude Code session (any number: only the session file's name depends on it). */
const AGENT_PID = "4244";
const DOCUMENT = "# Bench\n\nIt is a truth universally acknowledged.";
/** Longest any one notification may take before the run fails. */
const NOTIFY_TIMEOUT_MS = 10_000;

/** Takes `samples` samples of each kind, each after one unrecorded sample. */
export async function measurePush(samples: number, ctx: RunContext): Promise<PushSamples> {
  const dataDir = await mkdtemp(join(ctx.root, "push-"));
  const app = await startServer(BACKCHANNEL, dataDir);
  try {
    // One agent server at a time, so that the other's watches cost this one no CPU.
    const listChanged = await measureKind(app, dataDir, false, samples);
    const channel = await measureKind(app, dataDir, true, samples);
    return { listChanged, channel };
  } finally {
    await app.close();
  }
}

async function measureKind(app: ServerProcess, dataDir: string, channelPush: boolean, samples: number): Promise<PushLatencies> {
  const agent = await startSessionServer(dataDir, { CLAUDE_PID: AGENT_PID, BACKCHANNEL_CLAUDE_CHANNEL: channelPush ? "1" : "0" });
  const latencies: PushLatencies = { fromReturn: [], fromCall: [] };
  try {
    const { channel_id: channelId } = await agent.call<{ channel_id: string }>("open_reader", { markdown: DOCUMENT });
    const sent: string[] = [];
    let changes = 0;
    for (let i = -1; i < samples; i += 1) {
      // No timer decides this latency (the debounce starts at the change); a short random pause still spreads the samples.
      await pauseWithinPeriod(BACKCHANNEL.timerPeriodMs.watcher);
      const question = `Bench question ${i}?`;
      const calledAt = performance.now();
      const seq = await ask(app, channelId, question);
      const returnedAt = performance.now();
      let at: number | undefined;
      if (channelPush) {
        const push = await agent.pushes.at(sent.length, NOTIFY_TIMEOUT_MS, `the channel push of seq ${seq}`);
        const { channel_id, event, seq: pushed } = push.value.meta;
        if (channel_id !== channelId || event !== "ask" || pushed !== String(seq))
          throw new Error(`a push for another message: ${JSON.stringify(push.value.meta)}, sent seq ${seq}`);
        at = push.at;
      }
      // With the channel push too: a drain before the ask's own list_changed would cancel it (same summary), and the wait below would hang.
      const listed = await agent.listChanged.at(changes, NOTIFY_TIMEOUT_MS, `the list_changed of seq ${seq}`);
      changes += 1;
      at ??= listed.at;
      sent.push(String(seq));
      await expectWaiting(agent, `Waiting now: 1 (ask ${JSON.stringify(question)} on ${channelId})`);
      await drain(agent, channelId, seq);
      await agent.listChanged.at(changes, NOTIFY_TIMEOUT_MS, `the list_changed of the drain after seq ${seq}`);
      changes += 1;
      if (i < 0) continue;
      latencies.fromReturn.push(at - returnedAt);
      latencies.fromCall.push(at - calledAt);
    }
    assertExactlyOnce(
      "awareness channel push",
      channelPush ? sent : [],
      agent.pushes.entries.map((entry) => entry.value.meta.seq ?? "?"),
    );
    if (agent.listChanged.entries.length !== changes) {
      throw new Error(`${agent.listChanged.entries.length} list_changed for ${changes} changes of what waits`);
    }
  } finally {
    await agent.close();
  }
  return latencies;
}

/** The app's `notify_agent` of a reader's question; resolves with its seq. */
async function ask(app: ServerProcess, channelId: string, question: string): Promise<number> {
  const data = { thread_id: "t1", quote: "truth", paragraph: "It is a truth universally acknowledged.", question, history: [] };
  const { seq } = await app.call<{ seq: number }>("notify_agent", { channel_id: channelId, event: "ask", data });
  return seq;
}

/** @throws unless `poll_agent_messages`'s description now contains `expected`. */
async function expectWaiting(agent: SessionServer, expected: string): Promise<void> {
  const { tools } = await agent.client.listTools();
  const description = tools.find((tool) => tool.name === "poll_agent_messages")?.description ?? "";
  if (!description.includes(expected)) throw new Error(`poll_agent_messages says ${JSON.stringify(description)}, not ${JSON.stringify(expected)}`);
}

/**
 * The agent's read-and-clear `poll_agent_messages`.
 * @throws DeliveryError unless it returns exactly `seq`.
 */
async function drain(agent: SessionServer, channelId: string, seq: number): Promise<void> {
  const { messages } = await agent.call<{ messages: QueueMessage[] }>("poll_agent_messages", { channel_id: channelId });
  assertExactlyOnce(
    "awareness",
    [String(seq)],
    messages.map((message) => String(message.seq)),
  );
}
