/**
 * The Redis store under a restricted ACL user, for real: redis-server with a user made
 * the way "use an ACL user" leads to (`ACL SETUSER bc on >pw ~* +@all`), which Redis 7
 * gives no pub/sub channel, so it may run every command on every key but may not
 * publish or subscribe on the store's wake channels. Two real `backchannel serve`
 * processes (the agent's and the app's) and a real watcher use it.
 *
 * What must hold: no write Redis made is answered as refused (so a retry never
 * duplicates it), no read deletes what it does not return, waits still end when a
 * message lands (on the short timer, as wake-ups cannot come), and the server says at
 * start what to grant.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import type { QueueMessage } from "../protocol/message.js";
import { connectServer, spawnWatcher, stderrOf, structured, tempDataDir, waitUntil } from "./support/helpers.js";
import { type RedisServer, redisSkipReason, startRedis } from "./support/redis-server.js";

const skip = redisSkipReason();
const SENDS = 100;

interface Poll {
  messages: QueueMessage[];
  cursor: number;
  epoch: string;
}

describe("a Redis ACL user without pub/sub channel rights", { skip }, () => {
  let redis: RedisServer;
  let home: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  let agent: Client;
  let app: Client;

  before(async () => {
    redis = await startRedis();
    home = await tempDataDir();
    // What docs/storage.md's "use an ACL user" led to before: every key and command, no channel (Redis 7's default).
    await redis.admin(0, (admin) => admin.sendCommand(["ACL", "SETUSER", "bc", "on", ">pw", "~*", "+@all"]));
    env = { BACKCHANNEL_STORE: `redis://bc:pw@127.0.0.1:${redis.port}/0` };
    [agent, app] = await Promise.all([connectServer(home.dir, env), connectServer(home.dir, env)]);
  });
  after(async () => {
    await Promise.allSettled([agent?.close(), app?.close()]);
    await redis?.stop();
    await home?.cleanup();
  });

  test("the server says at start that the user may not publish, and what to grant", async () => {
    await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "acl-start" } });
    await waitUntil(() => /ACL SETUSER bc &bc:\* \(or allchannels\)/.test(stderrOf(agent)), "the start warning", { timeoutMs: 15_000 });
    assert.match(stderrOf(agent), /may not publish or subscribe on backchannel's wake channels/);
  });

  test(`${SENDS} sends each way: every one answered with its seq, delivered exactly once, nothing left behind`, async () => {
    const channel = "acl-sends";
    const toApp: number[] = [];
    for (let n = 1; n <= SENDS; n++) {
      const sent = await agent.callTool({ name: "notify_ui", arguments: { channel_id: channel, event: "note", data: { n } } });
      toApp.push(structured<{ seq: number }>(sent).seq);
    }
    assert.deepEqual(
      toApp,
      Array.from({ length: SENDS }, (_, i) => i + 1),
      "one seq per send: none refused, none written twice",
    );
    // The app reads with a cursor, as app/channel.ts does.
    const shown: number[] = [];
    let position = { after: 0 } as { after: number; epoch?: string };
    for (;;) {
      const poll = structured<Poll>(await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: channel, ...position } }));
      if (poll.messages.length === 0) break;
      for (const message of poll.messages) shown.push((message.data as { n: number }).n);
      position = { after: poll.cursor, epoch: poll.epoch };
    }
    assert.deepEqual(
      shown,
      Array.from({ length: SENDS }, (_, i) => i + 1),
    );

    const toAgent: number[] = [];
    for (let n = 1; n <= SENDS; n++) {
      const sent = await app.callTool({ name: "notify_agent", arguments: { channel_id: channel, event: "ask", data: { n } } });
      toAgent.push(structured<{ seq: number }>(sent).seq);
    }
    assert.equal(new Set(toAgent).size, SENDS);
    // The agent reads and clears, a few at a time as they come: each read returns what it deletes.
    const read: number[] = [];
    for (;;) {
      const poll = structured<Poll>(await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channel } }));
      if (poll.messages.length === 0) break;
      for (const message of poll.messages) read.push((message.data as { n: number }).n);
    }
    assert.deepEqual(
      read,
      Array.from({ length: SENDS }, (_, i) => i + 1),
    );
    const left = await redis.admin(0, async (admin) => [await admin.xLen(`bc:{${channel}}:ui`), await admin.xLen(`bc:{${channel}}:agent`)]);
    assert.deepEqual(left, [0, 0], "every message read was deleted, and only those");
  });

  test("a waiting poll still ends when a message lands, within seconds (no wake-up can come)", async () => {
    const channel = "acl-wait";
    // The poll says it waits with its first progress notification (sent when its first read found nothing).
    let waitingNow: () => void = () => undefined;
    const waits = new Promise<void>((resolve) => (waitingNow = resolve));
    const waiting = agent.callTool(
      { name: "poll_agent_messages", arguments: { channel_id: channel, wait_ms: 20_000 } },
      { onprogress: () => waitingNow(), timeout: 60_000 },
    );
    await waits;
    const sentAt = Date.now();
    await app.callTool({ name: "notify_agent", arguments: { channel_id: channel, event: "ask", data: { question: "?" } } });
    const answer = structured<Poll>(await waiting);
    const took = Date.now() - sentAt;
    assert.deepEqual(
      answer.messages.map((message) => message.event),
      ["ask"],
    );
    assert.ok(took < 8_000, `the wait ended ${took} ms after the send (the short timer is 1 s; the wait was 20 s)`);
  });

  test("the watcher, whose subscription Redis refuses, still sees a message within seconds", async () => {
    const channel = "acl-watch";
    const watcher = spawnWatcher(home.dir, [channel, "--allow-missing", "--timeout", "60"], env);
    await watcher.ready();
    // Its subscription was refused: it says so, with the grant, and reads on the short timer from then on.
    await watcher.stderrMatching(/ACL SETUSER bc &bc:\* \(or allchannels\)/);
    const sentAt = Date.now();
    await app.callTool({ name: "notify_agent", arguments: { channel_id: channel, event: "ask", data: { question: "?" } } });
    assert.equal(await watcher.exited, 0, watcher.stderr());
    const took = Date.now() - sentAt;
    assert.match(watcher.stdout(), /1 message waiting on acl-watch/);
    assert.ok(took < 8_000, `the watcher saw it ${took} ms after the send (its fallback would be 30 s)`);
  });
});
