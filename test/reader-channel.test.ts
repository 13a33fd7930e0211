/**
 * The app side of a channel (app/channel.ts) over ext-apps' real `App`, connected to a
 * real `AppBridge` whose tool calls go to a real `backchannel serve` process. The agent
 * is a second server process on the same data directory.
 *
 * The bridge's tool forwarding is written here, as a host writes it, so that the test
 * can give it faults of real hosts that a healthy server cannot produce on demand: a
 * lost poll response, a server that is unreachable for a while, and a host that runs
 * the app's calls one at a time and ignores cancellation (HOSTS.md). Those three are
 * the only emulated parts; every call still reaches the real server.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { App } from "@modelcontextprotocol/ext-apps";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { InMemoryTransport, type CallToolRequest, type CallToolResult, type Client } from "@modelcontextprotocol/client";
import { AppChannel, type ChannelMessage, type ChannelState } from "backchannel/app";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";

const INFO = { name: "channel-test", version: "0.0.0" };

/** A host: an AppBridge that forwards the app's tool calls to `client`, with switchable faults. */
class TestHost {
  /** Throw "unreachable" for every call while true. */
  down = false;
  /** Lose the response of the next poll_ui_messages (the server did the work; the app never hears). */
  losePollResponse = false;
  /** Answer the next poll_ui_messages with the previous poll's result again (a host that retried and delivered twice). */
  replayPoll = false;
  /** Run calls one at a time and ignore cancellation, like some hosts. */
  serialised = false;
  /** Every poll_ui_messages that ended (answered or failed), with whether the app had cancelled it. */
  readonly polls: { aborted: boolean; ms: number }[] = [];
  app!: App;
  private queue: Promise<unknown> = Promise.resolve();
  private lastPoll?: CallToolResult;
  private pendingPolls = 0;
  private pollWaiters: (() => void)[] = [];

  constructor(private readonly client: Client) {}

  async start(): Promise<App> {
    const [hostSide, appSide] = InMemoryTransport.createLinkedPair();
    const bridge = new AppBridge(null, INFO, { serverTools: {} });
    bridge.oncalltool = (params, extra) => this.call(params, extra.mcpReq.signal);
    await bridge.connect(hostSide);
    this.app = new App(INFO, {}, { autoResize: false });
    await this.app.connect(appSide);
    return this.app;
  }

  /** Resolves once a poll_ui_messages call of the app is in flight at the host. */
  async pollPending(): Promise<void> {
    while (this.pendingPolls === 0) await new Promise<void>((resolve) => this.pollWaiters.push(resolve));
  }

  private async call(params: CallToolRequest["params"], signal: AbortSignal): Promise<CallToolResult> {
    if (this.down) throw new Error("the server is unreachable");
    const started = Date.now();
    const isPoll = params.name === "poll_ui_messages";
    if (isPoll) {
      this.pendingPolls += 1;
      this.pollWaiters.splice(0).forEach((wake) => wake());
    }
    const run = () => this.client.callTool(params, this.serialised ? {} : { signal }) as Promise<CallToolResult>;
    let call = run;
    if (this.serialised) {
      const queued = this.queue.then(run, run);
      this.queue = queued;
      call = () => queued;
    }
    const result = await call().finally(() => {
      if (!isPoll) return;
      this.pendingPolls -= 1;
      this.polls.push({ aborted: signal.aborted, ms: Date.now() - started });
    });
    if (isPoll) {
      if (this.replayPoll && this.lastPoll) {
        this.replayPoll = false;
        return this.lastPoll;
      }
      this.lastPoll = result as CallToolResult;
      if (this.losePollResponse) {
        this.losePollResponse = false;
        throw new Error("the response was lost on the way");
      }
    }
    return result as CallToolResult;
  }
}

let dataDir: string;
let cleanup: () => Promise<void>;
let appSide: Client;
let agent: Client;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  [appSide, agent] = await Promise.all([connectServer(dataDir), connectServer(dataDir)]);
});
after(async () => {
  await Promise.all([appSide.close(), agent.close()]);
  await cleanup();
});

/** Sends `event` from the agent on `channel`. */
async function fromAgent(channel: string, event: string, data: unknown = {}): Promise<number> {
  return structured<{ seq: number }>(await agent.callTool({ name: "notify_ui", arguments: { channel_id: channel, event, data } })).seq;
}

/** Collects the messages `channel` delivers; `waitFor(n)` resolves once `n` have arrived. */
function collect(channel: AppChannel) {
  const seen: ChannelMessage[] = [];
  const waiters: (() => void)[] = [];
  channel.on("*", (_data, message) => {
    seen.push(message);
    waiters.splice(0).forEach((wake) => wake());
  });
  return {
    seen,
    async waitFor(count: number) {
      while (seen.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

/** Resolves when `channel` enters `state`. */
function stateReached(channel: AppChannel, wanted: ChannelState): Promise<void> {
  return new Promise((resolve) => {
    const previous = channel.onstatechange;
    channel.onstatechange = (state, error) => {
      previous?.(state, error);
      if (state === wanted) resolve();
    };
  });
}

describe("AppChannel", () => {
  test("delivers the agent's events in order, each seq once, when a poll response is lost or delivered twice", async () => {
    const host = new TestHost(appSide);
    const channel = new AppChannel(await host.start(), { channelId: "ch-order", waitMs: 5_000, minBackoffMs: 20 });
    const got = collect(channel);
    await fromAgent("ch-order", "status", { text: "one" });
    host.losePollResponse = true;
    channel.start();
    await got.waitFor(1);
    host.replayPoll = true;
    await fromAgent("ch-order", "answer", { thread_id: "t", text: "two" });
    await fromAgent("ch-order", "status", { text: "three" });
    await got.waitFor(3);
    channel.stop();
    assert.deepEqual(
      got.seen.map((message) => [message.seq, message.event]),
      [
        [1, "status"],
        [2, "answer"],
        [3, "status"],
      ],
    );
    assert.deepEqual(got.seen[1]?.data, { thread_id: "t", text: "two" });
  });

  test("a send cancels the pending long-poll and does not wait behind it", async () => {
    const host = new TestHost(appSide);
    const channel = new AppChannel(await host.start(), { channelId: "ch-cancel", waitMs: 20_000 });
    channel.start();
    await host.pollPending();
    const started = Date.now();
    const seq = await channel.send("ask", { question: "q" });
    const sendMs = Date.now() - started;
    assert.equal(seq, 1);
    assert.ok(sendMs < 1_000, `the send took ${sendMs} ms`);
    const { messages } = structured<{ messages: ChannelMessage[] }>(
      await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "ch-cancel" } }),
    );
    assert.deepEqual(
      messages.map((message) => [message.event, message.data]),
      [["ask", { question: "q" }]],
    );
    assert.ok(
      host.polls.some((poll) => poll.aborted),
      "the pending poll was cancelled",
    );
    assert.equal(channel.shortPolling, false);
    channel.stop();
  });

  test("backs off while the server is unreachable and recovers when it returns", async () => {
    const host = new TestHost(appSide);
    const channel = new AppChannel(await host.start(), { channelId: "ch-down", waitMs: 2_000, minBackoffMs: 20, maxBackoffMs: 200 });
    const states: ChannelState[] = [];
    channel.onstatechange = (state) => states.push(state);
    host.down = true;
    const retrying = stateReached(channel, "retrying");
    channel.start();
    await retrying;
    await fromAgent("ch-down", "answer", { thread_id: "t", text: "waited in the queue" });
    const got = collect(channel);
    host.down = false;
    await got.waitFor(1);
    assert.equal(got.seen[0]?.event, "answer");
    assert.equal(states[0], "retrying");
    assert.equal(states.at(-1), "live");
    channel.stop();
  });

  test("on a host that runs calls one at a time and ignores cancels, it falls back to short polls", async () => {
    const host = new TestHost(appSide);
    host.serialised = true;
    const channel = new AppChannel(await host.start(), { channelId: "ch-serial", waitMs: 1_500, serialisedAfterMs: 500, shortPollMs: 100 });
    channel.start();
    // With the first long-poll pending, send: the send waits behind it (up to 1.5 s).
    await host.pollPending();
    const first = Date.now();
    await channel.send("ask", { n: 1 });
    const firstMs = Date.now() - first;
    assert.ok(firstMs >= 500, `the first send waited behind the poll (${firstMs} ms)`);
    assert.equal(channel.shortPolling, true, "it noticed");

    // From now on polls are short: a send waits at most one short poll, and news still arrives.
    const got = collect(channel);
    await fromAgent("ch-serial", "answer", { thread_id: "t", text: "still arrives" });
    await got.waitFor(1);
    const second = Date.now();
    await channel.send("ask", { n: 2 });
    const secondMs = Date.now() - second;
    assert.ok(secondMs < 500, `a later send is quick (${secondMs} ms)`);
    channel.stop();
  });
});
