/**
 * Readers that keep a seq across reads, when the queue under them starts again (its seq
 * counter begins anew in a new epoch, protocol/epoch.ts): a redis-server restarted
 * without persistence, and a file-store channel whose folder was removed and made again.
 * Everything is real: the app side of a channel (app/channel.ts) over ext-apps' `App`
 * and a real `AppBridge` whose calls go to a real `backchannel serve`, the agent a second
 * server process, the watchers real `backchannel watch` processes.
 *
 * What must hold: every message sent after the queue started again is shown (none is
 * dropped as "already seen", and no old cursor deletes it), and nothing twice.
 */
import assert from "node:assert/strict";
import { after, before, describe, type TestContext, test } from "node:test";
import { App } from "@modelcontextprotocol/ext-apps";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { type CallToolResult, type Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { AppChannel } from "backchannel-mcp/app";
import { collectMessages } from "./support/channel-messages.js";
import { FileStore } from "../store/file/file-store.js";
import { connectServer, spawnWatcher, stderrOf, structured, tempDataDir } from "./support/helpers.js";
import { type RedisServer, redisSkipReason, startRedis } from "./support/redis-server.js";

const INFO = { name: "epoch-test", version: "0.0.0" };
const BEFORE = 20;
const AFTERWARDS = 25;

/** An app connected through a real AppBridge whose tool calls go to `client` (a real server), as a host forwards them. */
interface HostedApp {
  app: App;
  /** Holds the app's calls at the host until {@link release} (a host cut off from the server for a while). */
  hold(): void;
  release(): void;
}

async function connectApp(client: Client): Promise<HostedApp> {
  const [hostSide, appSide] = InMemoryTransport.createLinkedPair();
  const bridge = new AppBridge(null, INFO, { serverTools: {} });
  let held: Promise<void> | undefined;
  let release: () => void = () => undefined;
  bridge.oncalltool = async (params, extra) => {
    await held;
    return (await client.callTool(params, { signal: extra.mcpReq.signal })) as CallToolResult;
  };
  await bridge.connect(hostSide);
  const app = new App(INFO, {}, { autoResize: false });
  await app.connect(appSide);
  return {
    app,
    hold: () => {
      held = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => {
      held = undefined;
      release();
    },
  };
}

/** `notify_ui` from the agent, tried again while the store is away (as an agent would, on a STORE_UNAVAILABLE result). */
async function sendUntilSent(agent: Client, channel: string, n: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const result = await agent.callTool({ name: "notify_ui", arguments: { channel_id: channel, event: "note", data: { n } } });
    if (!result.isError) return structured<{ seq: number }>(result).seq;
    const code = (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
    assert.equal(code, "STORE_UNAVAILABLE", `only an outage may refuse a send: ${JSON.stringify(result.content)}`);
    if (attempt > 200) throw new Error("the store did not come back");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The scenario of both stores: a live app shows the agent's first {@link BEFORE}
 * messages; then, while the app's calls are held at its host, `startAgain` makes the
 * queue start again and the agent sends {@link AFTERWARDS} more; the app's next poll
 * reaches the server only once the new queue has passed the seqs it saw.
 * @returns the `n` of every message the app showed, in order, and the seqs of those sent afterwards.
 */
async function showAcrossARestart(
  t: TestContext,
  agent: Client,
  appSide: Client,
  channelId: string,
  startAgain: () => Promise<void>,
): Promise<{ shownNumbers: number[]; seqsAfterwards: number[] }> {
  const host = await connectApp(appSide);
  const channel = new AppChannel(host.app, { channelId, waitMs: 5_000, minBackoffMs: 50, maxBackoffMs: 500 });
  const app = collectMessages(channel);
  channel.start();
  t.after(() => channel.stop());
  for (const n of range(1, BEFORE)) await sendUntilSent(agent, channelId, n);
  await app.waitFor(BEFORE);
  host.hold();
  await startAgain();
  const seqsAfterwards: number[] = [];
  for (const n of range(BEFORE + 1, AFTERWARDS)) seqsAfterwards.push(await sendUntilSent(agent, channelId, n));
  host.release();
  await app.waitFor(BEFORE + AFTERWARDS);
  channel.stop();
  return { shownNumbers: app.seen.map((message) => (message.data as { n: number }).n), seqsAfterwards };
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe("a Redis store restarted empty under a live app", { skip: redisSkipReason() }, () => {
  let redis: RedisServer;
  let home: { dir: string; cleanup: () => Promise<void> };
  let agent: Client;
  let appSide: Client;

  before(async () => {
    redis = await startRedis({ appendonly: "no" });
    home = await tempDataDir();
    const env = { BACKCHANNEL_STORE: redis.url(0) };
    [agent, appSide] = await Promise.all([connectServer(home.dir, env), connectServer(home.dir, env)]);
  });
  after(async () => {
    await Promise.allSettled([agent?.close(), appSide?.close()]);
    await redis?.stop();
    await home?.cleanup();
  });

  test(`the app read ${BEFORE}; Redis restarts with nothing; all ${AFTERWARDS} sent afterwards are shown, each once`, async (t) => {
    const { shownNumbers, seqsAfterwards } = await showAcrossARestart(t, agent, appSide, "epoch-restart", () => redis.restart());
    assert.deepEqual(seqsAfterwards, range(1, AFTERWARDS), "the queue started again at seq 1: the seqs the app has seen come again");
    assert.deepEqual(shownNumbers, range(1, BEFORE + AFTERWARDS), "every message shown, in order, none twice");
    assert.match(stderrOf(agent), /a restart of Redis loses every message not yet read/, "the start warning says what a restart loses");
  });
});

describe("a file-store channel removed and made again under its readers", () => {
  let home: { dir: string; cleanup: () => Promise<void> };
  let agent: Client;
  let appSide: Client;

  before(async () => {
    home = await tempDataDir();
    [agent, appSide] = await Promise.all([connectServer(home.dir), connectServer(home.dir)]);
  });
  after(async () => {
    await Promise.allSettled([agent?.close(), appSide?.close()]);
    await home?.cleanup();
  });

  test("the app shows every message of the channel made again", async (t) => {
    // Removed as the idle sweep removes it (renamed away whole, while the app's server may be writing in it).
    const removed = () => new FileStore({ dataDir: home.dir }).remove("epoch-folder");
    const { shownNumbers } = await showAcrossARestart(t, agent, appSide, "epoch-folder", removed);
    assert.deepEqual(shownNumbers, range(1, BEFORE + AFTERWARDS));
  });

  test("the watcher in follow mode tells of every message of the channel made again", async (t) => {
    const channelId = "epoch-follow";
    const ask = (n: number) =>
      appSide.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "note", data: { text: `n${n}` } } });
    for (const n of [1, 2, 3]) await ask(n);
    const watcher = spawnWatcher(home.dir, [channelId, "--follow", "--timeout", "60"]);
    t.after(() => watcher.child.kill("SIGTERM"));
    await watcher.lines(3);
    await new FileStore({ dataDir: home.dir }).remove(channelId);
    for (const n of [4, 5]) await ask(n);
    const lines = await watcher.lines(5);
    watcher.child.kill("SIGTERM");
    await watcher.exited;
    assert.deepEqual(
      lines.map((line) => /#(\d+) note: .*"?n(\d)/.exec(line)?.slice(1)),
      [
        ["1", "1"],
        ["2", "2"],
        ["3", "3"],
        ["1", "4"],
        ["2", "5"],
      ],
      lines.join("\n"),
    );
  });
});
