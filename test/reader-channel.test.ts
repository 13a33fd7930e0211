/**
 * The app side of a channel (app/channel.ts) over ext-apps' real `App`, connected to a
 * real `AppBridge` whose tool calls go to a real `backchannel serve` process. The agent
 * is a second server process on the same data directory.
 *
 * The bridge's tool forwarding is written here, as a host writes it, so that the test
 * can give it behaviours of real hosts that a healthy server cannot produce on demand: a
 * lost poll response, a server that is unreachable for a while, a slow host, and a host
 * that runs the app's calls one at a time (honouring cancellation or not). Those are
 * the only emulated parts; every call still reaches the real server.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { App } from "@modelcontextprotocol/ext-apps";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { InMemoryTransport, type CallToolRequest, type CallToolResult, type Client } from "@modelcontextprotocol/client";
import { AppChannel, type ChannelMessage, type ChannelState } from "backchannel-mcp/app";
import { collectMessages } from "./support/channel-messages.js";
import { connectServer, structured, startServerPair } from "./support/helpers.js";

const INFO = { name: "channel-test", version: "0.0.0" };

/** A host: an AppBridge that forwards the app's tool calls to `client`, with switchable faults. */
class TestHost {
  /** Throw "unreachable" for every call while true. */
  down = false;
  /** Lose the response of the next poll_ui_messages (the server did the work; the app never hears). */
  losePollResponse = false;
  /** Answer the next poll_ui_messages with the previous poll's result again (a host that retried and delivered twice). */
  replayPoll = false;
  /** Run calls one at a time, like some hosts; they ignore cancellation unless {@link honoursCancel}. */
  serialised = false;
  /** With {@link serialised}: a cancelled call ends at once and the next one runs. */
  honoursCancel = false;
  /** Added to every call before it is forwarded: a slow host (its own work, not the server's). */
  delayMs = 0;
  /** Every poll_ui_messages that ended (answered or failed), with whether the app had cancelled it. */
  readonly polls: { aborted: boolean; ms: number; waitMs: number }[] = [];
  /** How many of the app's calls carried a progress token. */
  progressTokens = 0;
  app!: App;
  private queue: Promise<unknown> = Promise.resolve();
  private lastPoll?: CallToolResult;
  private pendingLongPolls = 0;
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

  /** Resolves once a poll_ui_messages call of the app that waits (`wait_ms` > 0) is in flight at the host. */
  pollPending(): Promise<void> {
    return this.until(() => this.pendingLongPolls > 0);
  }

  /** Resolves once `count` polls that wait (`wait_ms` > 0) have ended. */
  longPollsEnded(count: number): Promise<void> {
    return this.until(() => this.polls.filter((poll) => poll.waitMs > 0).length >= count);
  }

  private async until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise<void>((resolve) => this.pollWaiters.push(resolve));
  }

  private async call(params: CallToolRequest["params"], signal: AbortSignal): Promise<CallToolResult> {
    if (this.down) throw new Error("the server is unreachable");
    if (params._meta?.progressToken !== undefined) this.progressTokens += 1;
    const started = Date.now();
    const isPoll = params.name === "poll_ui_messages";
    const waitMs = isPoll ? Number(params.arguments?.wait_ms ?? 0) : 0;
    if (waitMs > 0) {
      this.pendingLongPolls += 1;
      this.pollWaiters.splice(0).forEach((wake) => wake());
    }
    const forward = this.serialised && !this.honoursCancel ? {} : { signal };
    const run = async () => {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      return (await this.client.callTool(params, forward)) as CallToolResult;
    };
    let call = run;
    if (this.serialised) {
      const queued = this.queue.then(run, run);
      this.queue = queued.catch(() => undefined);
      call = () => queued;
    }
    const result = await call().finally(() => {
      if (!isPoll) return;
      if (waitMs > 0) this.pendingLongPolls -= 1;
      this.polls.push({ aborted: signal.aborted, ms: Date.now() - started, waitMs });
      this.pollWaiters.splice(0).forEach((wake) => wake());
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
let agent: Client;
let appSide: Client;
let close: () => Promise<void>;
// Two separate server processes, as hosts run them (the model and the app get separate sessions).
before(async () => ({ dataDir, agent, app: appSide, close } = await startServerPair()));
after(() => close());

/** Sends `event` from the agent on `channel`. */
async function fromAgent(channel: string, event: string, data: unknown = {}): Promise<number> {
  return structured<{ seq: number }>(await agent.callTool({ name: "notify_ui", arguments: { channel_id: channel, event, data } })).seq;
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
    const got = collectMessages(channel);
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

  test("two apps on one channel (the chat's reader and its browser tab) each receive every message, however far apart they poll", {
    timeout: 60_000,
  }, async () => {
    const [quick, slow] = [new TestHost(appSide), new TestHost(appSide)];
    // The slow one's host takes 150 ms a call: the quick one acknowledges each message well before the slow one reads it.
    slow.delayMs = 150;
    const channels = [
      new AppChannel(await quick.start(), { channelId: "ch-two", waitMs: 5_000 }),
      new AppChannel(await slow.start(), { channelId: "ch-two", waitMs: 5_000 }),
    ];
    assert.notEqual(channels[0]!.reader, channels[1]!.reader, "each names a reader of its own");
    const [got, gotSlow] = channels.map(collectMessages);
    // Both are reading (a reader starts where the queue is: what came before is in its app's state).
    for (const channel of channels) channel.start();
    await Promise.all([quick.pollPending(), slow.pollPending()]);
    await fromAgent("ch-two", "hello");
    for (let n = 1; n <= 6; n++) await fromAgent("ch-two", "status", { n });
    await Promise.all([got!.waitFor(7), gotSlow!.waitFor(7)]);
    for (const channel of channels) channel.stop();
    for (const { seen } of [got!, gotSlow!])
      assert.deepEqual(
        seen.map((message) => message.seq),
        [1, 2, 3, 4, 5, 6, 7],
      );
  });

  test("on a host that runs calls side by side, a send never cancels the poll, and the channel learns the host", async () => {
    const host = new TestHost(appSide);
    const channel = new AppChannel(await host.start(), { channelId: "ch-side", waitMs: 20_000 });
    channel.start();
    await host.pollPending();
    for (const n of [1, 2, 3]) {
      const started = Date.now();
      const seq = await channel.send("ask", { n });
      const sendMs = Date.now() - started;
      assert.equal(seq, n);
      assert.ok(sendMs < 1_000, `send ${n} took ${sendMs} ms`);
      assert.equal(channel.hostCalls, "side-by-side", `known after send ${n}`);
    }
    const { messages } = structured<{ messages: ChannelMessage[] }>(
      await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "ch-side" } }),
    );
    assert.deepEqual(
      messages.map((message) => message.data),
      [{ n: 1 }, { n: 2 }, { n: 3 }],
    );
    assert.equal(channel.cancelledPolls, 0);
    assert.ok(!host.polls.some((poll) => poll.aborted), "no poll was cancelled");
    channel.stop();
  });

  test("a slow host that runs calls side by side (1.2 s a call) is not taken for one that serialises", async () => {
    const host = new TestHost(appSide);
    host.delayMs = 1_200;
    const channel = new AppChannel(await host.start(), { channelId: "ch-slow", waitMs: 20_000 });
    channel.start();
    await host.pollPending();
    const started = Date.now();
    await channel.send("ask", { question: "slow" });
    const sendMs = Date.now() - started;
    assert.ok(sendMs >= 1_200, `the host's delay applied (${sendMs} ms)`);
    assert.equal(channel.hostCalls, "side-by-side");
    assert.equal(channel.cancelledPolls, 0, "the slow send cancelled nothing");
    channel.stop();
  });

  test("on a host that runs calls one at a time but honours cancels, a send cancels the poll after about a second, and polls stay long", async () => {
    const host = new TestHost(appSide);
    host.serialised = true;
    host.honoursCancel = true;
    const channel = new AppChannel(await host.start(), { channelId: "ch-cancels", waitMs: 20_000 });
    channel.start();
    await host.pollPending();
    const started = Date.now();
    await channel.send("ask", { question: "q" });
    const sendMs = Date.now() - started;
    assert.ok(sendMs >= 900 && sendMs < 5_000, `the send waited about a second, not the poll's 20 s (${sendMs} ms)`);
    assert.equal(channel.cancelledPolls, 1);
    assert.equal(channel.hostCalls, "unknown", "nothing proves either way");
    assert.equal(channel.shortPolling, false);

    // Receiving goes on with long polls: the answer arrives while one waits.
    const got = collectMessages(channel);
    await host.pollPending();
    await fromAgent("ch-cancels", "answer", { thread_id: "t", text: "here" });
    await got.waitFor(1);
    assert.ok(
      host.polls.every((poll) => poll.waitMs > 0 || poll === host.polls[0]),
      "only the first poll was short",
    );
    channel.stop();
  });

  test("the app's polls send no progress, although ext-apps puts a progress token on every call", async () => {
    let progress = 0;
    const client = await connectServer(
      dataDir,
      {},
      {
        prepare: (c) =>
          c.setNotificationHandler("notifications/progress", () => {
            progress += 1;
          }),
      },
    );
    try {
      const host = new TestHost(client);
      const channel = new AppChannel(await host.start(), { channelId: "ch-progress", waitMs: 300 });
      channel.start();
      // Three long polls that waited their whole 300 ms: a ticking server would have sent progress as each wait began.
      await host.longPollsEnded(3);
      channel.stop();
      assert.ok(host.progressTokens >= 3, `the polls carried progress tokens (${host.progressTokens})`);
      assert.equal(progress, 0);
      // The control: the agent's poll, called the same way, does get progress.
      await client.callTool({ name: "poll_agent_messages", arguments: { channel_id: "ch-progress", wait_ms: 300 } }, { onprogress: () => undefined });
      assert.ok(progress > 0, "the agent's poll got progress");
    } finally {
      await client.close();
    }
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
    const got = collectMessages(channel);
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
    const channel = new AppChannel(await host.start(), {
      channelId: "ch-serial",
      waitMs: 3_000,
      cancelAfterMs: 200,
      serialisedAfterMs: 500,
      shortPollMs: 100,
    });
    channel.start();
    // With the first long-poll pending, send: the cancel does nothing, so the send waits behind the poll (up to 3 s).
    await host.pollPending();
    const first = Date.now();
    await channel.send("ask", { n: 1 });
    const firstMs = Date.now() - first;
    assert.ok(firstMs >= 500, `the first send waited behind the poll (${firstMs} ms)`);
    assert.equal(channel.shortPolling, true, "it noticed");
    assert.equal(channel.hostCalls, "one-at-a-time");

    // From now on polls are short: a send waits at most one short poll, and news still arrives.
    const got = collectMessages(channel);
    await fromAgent("ch-serial", "answer", { thread_id: "t", text: "still arrives" });
    await got.waitFor(1);
    const second = Date.now();
    await channel.send("ask", { n: 2 });
    const secondMs = Date.now() - second;
    assert.ok(secondMs < 500, `a later send is quick (${secondMs} ms)`);
    channel.stop();
  });
});
