/**
 * A Redis full to its maxmemory (with `noeviction`, as the README tells users to run it),
 * for real: a redis-server filled by someone else's keys until it refuses writes. Reads
 * and acknowledgements must go on, since they are how room is made; writes are refused
 * with an error that says what is true and what to do.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { QueueMessage } from "../protocol/message.js";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";
import { redisSkipReason, startRedis } from "./support/redis-server.js";

const skip = redisSkipReason();

type Poll = { messages: QueueMessage[]; cursor: number; pending: number };

test("a Redis full to maxmemory still serves reads and acknowledgements; writes get STORE_FULL saying so", {
  skip,
  timeout: 120_000,
}, async (t) => {
  const { dir, cleanup } = await tempDataDir();
  const redis = await startRedis();
  const client = await connectServer(dir, { BACKCHANNEL_STORE: redis.url(0) });
  try {
    for (let n = 1; n <= 20; n++) {
      structured(await client.callTool({ name: "notify_ui", arguments: { channel_id: "full", event: "note", data: { n, pad: "x".repeat(2000) } } }));
    }
    structured(await client.callTool({ name: "notify_agent", arguments: { channel_id: "full", event: "ask", data: { q: 1 } } }));
    structured(await client.callTool({ name: "notify_agent", arguments: { channel_id: "full", event: "ask", data: { q: 2 } } }));

    // Someone else fills Redis: maxmemory a little above what is used, then keys of
    // 256 KiB in another database until Redis refuses one. Each is made inside Redis (a
    // script), so that Redis ends above maxmemory as saved apps leave it, not below it
    // as a client's refused 256 KiB request does. Done again before each call, since a
    // read that acknowledges frees room.
    const used = await redis.admin(0, async (admin) => Number(/used_memory:(\d+)/.exec(await admin.info("memory"))?.[1]));
    await redis.admin(0, (admin) => admin.configSet("maxmemory", String(used + 4 * 1024 * 1024)));
    let fillers = 0;
    const fill = () =>
      redis.admin(9, async (admin) => {
        for (let tries = 0; tries < 1000; tries++) {
          try {
            await admin.sendCommand(["EVAL", "redis.call('SET', KEYS[1], string.rep('f', 262144))", "1", `filler:${fillers++}`]);
          } catch (error) {
            assert.match(String(error), /OOM/);
            return;
          }
        }
        throw new Error("Redis never filled up");
      });
    await fill();
    t.diagnostic(`Redis full after ${fillers} keys of 256 KiB`);

    const calls: [string, Record<string, unknown>][] = [
      ["poll_ui_messages", { channel_id: "full", after: 0 }],
      ["poll_ui_messages", { channel_id: "full", after: 5 }],
      ["poll_agent_messages", { channel_id: "full", after: 0 }],
      ["poll_agent_messages", { channel_id: "full", after: 0, wait_ms: 200 }],
      ["poll_ui_messages", { channel_id: "never-written", after: 0 }],
      ["poll_agent_messages", { channel_id: "never-written" }],
      ["reader_state", { channel_id: "full" }],
      ["app_state", { channel_id: "full" }],
    ];
    const outcomes: string[] = [];
    for (const [name, args] of calls) {
      await fill();
      const result = await client.callTool({ name, arguments: args });
      outcomes.push(`${name} ${JSON.stringify(args)}: ${result.isError ? `ERROR ${textOf(result)}` : "ok"}`);
    }
    assert.deepEqual(
      outcomes.filter((line) => line.includes("ERROR")),
      [],
      `every read on a full Redis answers:\n${outcomes.join("\n")}`,
    );

    // A read of a channel never written made no key, full or not.
    assert.deepEqual(await redis.admin(0, (admin) => admin.keys("*never-written*")), [], "a read creates no key");

    // The acknowledgement (after: 5) was carried out: the next read starts at 6.
    await fill();
    const next = structured<Poll>(await client.callTool({ name: "poll_ui_messages", arguments: { channel_id: "full", after: 10 } }));
    assert.deepEqual(
      next.messages.map((message) => (message.data as { n: number }).n),
      [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    );

    // A write is refused, saying that Redis is full, that nothing was written, and what to do.
    await fill();
    const refused = await client.callTool({ name: "notify_ui", arguments: { channel_id: "full", event: "note", data: { n: 21 } } });
    assert.equal(refused.isError, true, "a write into a full Redis is refused");
    assert.equal((refused.structuredContent as { error?: { code?: string } }).error?.code, "STORE_FULL");
    assert.match(textOf(refused), /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0 is full \(maxmemory\): nothing was written/);
    assert.match(textOf(refused), /reads and acknowledgements still work/);
    assert.match(textOf(refused), /maxmemory/);

    // Room made by whoever filled it: writes work again, nothing was lost, no seq repeated.
    await redis.admin(9, (admin) => admin.flushDb());
    const sent = structured<{ seq: number }>(
      await client.callTool({ name: "notify_ui", arguments: { channel_id: "full", event: "note", data: { n: 21 } } }),
    );
    assert.equal(sent.seq, 21);
    const rest = structured<Poll>(await client.callTool({ name: "poll_ui_messages", arguments: { channel_id: "full", after: 20 } }));
    assert.deepEqual(
      rest.messages.map((message) => (message.data as { n: number }).n),
      [21],
    );
  } finally {
    await client.close();
    await redis.stop();
    await cleanup();
  }
});

function textOf(result: { content?: unknown }): string {
  return ((result.content as { text?: string }[] | undefined) ?? []).map((part) => part.text ?? "").join("\n");
}
