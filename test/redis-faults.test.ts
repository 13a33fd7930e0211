/**
 * Redis itself failing, for real: redis-server killed with SIGKILL and restarted again
 * and again under a multi-process load (with `appendonly yes` and `appendfsync always`,
 * as the README tells users to run it), and Redis stopped for 10 s under load while
 * backchannel servers keep running.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import type { QueueMessage } from "../protocol/message.js";
import { RedisStore } from "../store/redis/redis-store.js";
import { StoreUnavailableError } from "../store/redis/errors.js";
import { connectServer, spawnWatcher, structured, tempDataDir, waitUntil } from "./support/helpers.js";
import { type FixtureProcess, spawnFixture } from "./support/fixture-process.js";
import { redisSkipReason, startRedis } from "./support/redis-server.js";
import { readRest } from "./support/stores.js";

const skip = redisSkipReason();
const REDIS_KILLS = 20;
const WRITERS = 4;

describe("Redis failing under load", { skip }, () => {
  let home: { dir: string; cleanup: () => Promise<void> };
  before(async () => (home = await tempDataDir()));
  after(() => home.cleanup());

  test(`redis-server killed with SIGKILL ${REDIS_KILLS} times under ${WRITERS} writer processes: no acknowledged message lost or duplicated, seqs dense`, {
    timeout: 300_000,
  }, async (t) => {
    const redis = await startRedis({ appendonly: "yes", appendfsync: "always" });
    const channel = "redis-killed";
    const env = { BACKCHANNEL_STORE: redis.url(0) };
    const writers = new Map<string, FixtureProcess>();
    let acks = 0;
    const ackWaiters = new Set<() => void>();
    const onLines = () => {
      acks += 1;
      for (const wake of ackWaiters) wake();
      ackWaiters.clear();
    };
    /** Resolves after `count` more batches of acknowledgements from the writers. */
    const moreAcks = async (count: number) => {
      const target = acks + count;
      while (acks < target) await new Promise<void>((resolve) => ackWaiters.add(resolve));
    };
    for (let index = 0; index < WRITERS; index++) writers.set(`w${index}`, spawnFixture("looping-writer", [channel, `w${index}`], env, onLines));

    // A cursor reader in this process, all along; a poll that fails (Redis away) is made again.
    const store = new RedisStore({ url: redis.url(0), warn: () => undefined, checkSettings: false });
    const received = new Map<number, QueueMessage>();
    let duplicates = 0;
    let cursor = 0;
    let failedPolls = 0;
    let stop = false;
    const reader = (async () => {
      while (!stop) {
        try {
          const result = await store.poll(channel, "agent", { after: cursor, waitMs: 200 });
          for (const message of result.messages) {
            if (received.has(message.seq)) duplicates += 1;
            received.set(message.seq, message);
          }
          cursor = result.cursor;
        } catch (error) {
          assert.ok(error instanceof StoreUnavailableError, `a poll during an outage fails as unavailable: ${(error as Error).message}`);
          failedPolls += 1;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    })();
    reader.catch(() => undefined);

    try {
      let slowestRecovery = 0;
      for (let kill = 1; kill <= REDIS_KILLS; kill++) {
        // Under load: some appends acknowledged since the last restart, then a kill at a random moment.
        await moreAcks(5);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
        await redis.restart();
        const restarted = Date.now();
        await moreAcks(1);
        slowestRecovery = Math.max(slowestRecovery, Date.now() - restarted);
      }
      for (const writer of writers.values()) writer.child.kill("SIGKILL");
      await Promise.all([...writers.values()].map((writer) => writer.exited));
      stop = true;
      await reader;
      await readRest(store, channel, cursor, received);

      let acknowledged = 0;
      let failed = 0;
      for (const [id, writer] of writers) {
        assert.equal(writer.child.signalCode, "SIGKILL", `${id} ran until the end: ${writer.stderr()}`);
        for (const line of writer.lines) {
          if (line.endsWith(" failed")) {
            failed += 1;
            continue;
          }
          const [n, seq] = line.split(" ").map(Number) as [number, number];
          assert.deepEqual(received.get(seq)?.data, { writer: id, n }, `acknowledged seq ${seq} of ${id} (n=${n}) was delivered, with its own data`);
          acknowledged += 1;
        }
      }
      const seen = new Set<string>();
      for (const { data } of received.values()) {
        const { writer, n } = data as { writer: string; n: number };
        assert.ok(!seen.has(`${writer}/${n}`), `${writer}/${n} was stored once`);
        seen.add(`${writer}/${n}`);
      }
      const seqs = [...received.keys()].sort((a, b) => a - b);
      assert.deepEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, index) => index + 1),
        "seqs are dense from 1: none repeated, none skipped",
      );
      assert.equal(duplicates, 0, "the cursor reader never saw a seq twice");
      assert.ok(acknowledged > REDIS_KILLS * 5, `${acknowledged} acknowledged messages checked`);
      t.diagnostic(
        `redis kills=${REDIS_KILLS} acknowledged=${acknowledged} failed-appends=${failed} stored=${received.size} failed-polls=${failedPolls} slowest-recovery=${slowestRecovery}ms`,
      );
    } finally {
      stop = true;
      for (const writer of writers.values()) writer.child.kill("SIGKILL");
      await store.close();
      await redis.stop();
    }
  });

  test("Redis stopped for 10 s under load: clear, fast errors; waits end with an error; the same servers recover by themselves", {
    timeout: 120_000,
  }, async (t) => {
    const redis = await startRedis();
    const env = { BACKCHANNEL_STORE: redis.url(0) };
    const app = await connectServer(home.dir, env);
    const agent = await connectServer(home.dir, env);
    const pids = [app, agent].map(pidOf);
    const watcher = spawnWatcher(home.dir, ["outage-watched", "--allow-missing", "--timeout", "120"], env);
    try {
      await watcher.ready();
      const load = startLoad(app, agent);
      await load.calls(20);
      const acknowledgedBefore = load.acknowledged();

      // A long-poll on a queue nobody writes to, waiting when Redis goes.
      const quiet = app.callTool({ name: "poll_agent_messages", arguments: { channel_id: "outage-quiet", after: 0, wait_ms: 60_000 } });
      // It waits once its channel's wake-ups are subscribed to.
      await waitUntil(
        async () =>
          ((await redis.admin(0, (admin) => admin.sendCommand(["PUBSUB", "SHARDCHANNELS", "bc:{outage-quiet}:wake:agent"]))) as unknown as string[])
            .length === 1,
        "the quiet poll waiting",
      );
      await redis.kill("SIGTERM");
      const stoppedAt = Date.now();
      const ended = await quiet;
      const waitEnded = Date.now() - stoppedAt;
      assert.equal(ended.isError, true, "the wait ends with an error");
      assert.match(textOf(ended), /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable/);
      assert.ok(waitEnded < 5000, `the wait ended ${waitEnded} ms after Redis went, not at its 60 s timeout`);

      // Ten seconds without Redis, under load: every call fails, fast and clearly.
      const during = load.since();
      await new Promise((resolve) => setTimeout(resolve, 10_000 - (Date.now() - stoppedAt)));
      const outage = during();
      assert.ok(outage.errors.length > 10, `${outage.errors.length} calls failed during the outage`);
      for (const error of outage.errors)
        assert.match(error, /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable \(.*\): nothing was read or written/);
      const slowest = Math.max(...outage.durations.slice(3));
      assert.ok(slowest < 3000, `once the outage is known, each failing call returns within ${slowest} ms`);
      assert.equal(outage.successes, 0, "nothing succeeded while Redis was away");

      await redis.restart();
      const restartedAt = Date.now();
      const after = load.since();
      await load.successes(10);
      const recovery = Date.now() - restartedAt;
      assert.ok(recovery < 10_000, `calls succeed again ${recovery} ms after Redis is back`);
      assert.deepEqual([app, agent].map(pidOf), pids, "the same server processes, never restarted");

      // The watcher kept watching through the outage and wakes on a message after it.
      structured(
        await agent.callTool({ name: "notify_agent", arguments: { channel_id: "outage-watched", event: "ask", data: { question: "still there?" } } }),
      );
      assert.equal(await watcher.exited, 0, watcher.stderr());
      assert.match(watcher.stderr(), /the Redis store at .* is unreachable .*; still watching/, "the watcher said so, once, and went on");
      await load.stop();
      const delivered = load.delivered();
      for (let n = 1; n <= acknowledgedBefore; n++) assert.ok(delivered.has(n), `message ${n}, acknowledged before the outage, was delivered`);
      t.diagnostic(
        `outage: ${outage.errors.length} failed calls, slowest ${slowest} ms; wait ended ${waitEnded} ms after the stop; recovered ${recovery} ms after the restart (${after().successes} calls since)`,
      );
    } finally {
      watcher.child.kill();
      await Promise.allSettled([app.close(), agent.close()]);
      await redis.stop();
    }
  });
});

describe("Redis connected but silent", { skip }, () => {
  test("redis-server stopped with SIGSTOP: every call fails within seconds, not never; after SIGCONT the same server answers again, nothing lost", {
    timeout: 90_000,
  }, async (t) => {
    const { dir, cleanup } = await tempDataDir();
    const redis = await startRedis();
    const client = await connectServer(dir, { BACKCHANNEL_STORE: redis.url(0) });
    try {
      structured(await client.callTool({ name: "notify_agent", arguments: { channel_id: "silent", event: "ask", data: { n: 1 } } }));
      redis.child().kill("SIGSTOP");
      const calls: [string, Record<string, unknown>][] = [
        ["notify_agent", { channel_id: "silent", event: "ask", data: { n: 2 } }],
        ["poll_agent_messages", { channel_id: "silent", after: 0 }],
        ["poll_ui_messages", { channel_id: "silent", after: 0, wait_ms: 2000 }],
        ["post_wall", { text: "away" }],
      ];
      const durations: number[] = [];
      const texts: string[] = [];
      for (const [name, args] of calls) {
        const started = Date.now();
        const result = await client.callTool({ name, arguments: args });
        durations.push(Date.now() - started);
        texts.push(textOf(result));
        assert.equal(result.isError, true, `${name} succeeded against a stopped Redis`);
        assert.match(textOf(result), /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable/, name);
      }
      // The first call had reached Redis, which may carry it out once it runs again: the error must not say "nothing was written".
      assert.match(texts[0]!, /was sent and may still be carried out/);
      assert.match(texts[1]!, /nothing was read or written/);
      // The first call finds out (within the 2 s ready wait); the others fail at once.
      assert.ok(durations[0]! < 6000, `the first call took ${durations[0]} ms`);
      assert.ok(Math.max(...durations.slice(1)) < 3000, `later calls took ${durations.slice(1)} ms`);
      redis.child().kill("SIGCONT");
      const resumedAt = Date.now();
      let polled: { messages: QueueMessage[] } | undefined;
      while (polled === undefined && Date.now() - resumedAt < 20_000) {
        const result = await client.callTool({ name: "poll_agent_messages", arguments: { channel_id: "silent", after: 0 } });
        if (!result.isError) polled = structured(result);
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(polled, "the server answered again after SIGCONT");
      assert.equal((polled.messages[0]?.data as { n: number } | undefined)?.n, 1, "the message acknowledged before the stop is there");
      t.diagnostic(`calls while stopped: ${durations.join(", ")} ms; answering again ${Date.now() - resumedAt} ms after SIGCONT`);
    } finally {
      redis.child().kill("SIGCONT");
      await client.close();
      await redis.stop();
      await cleanup();
    }
  });
});

function pidOf(client: Client): number | null | undefined {
  return (client.transport as { pid?: number | null } | undefined)?.pid;
}

function textOf(result: { content?: unknown }): string {
  return ((result.content as { text?: string }[] | undefined) ?? []).map((part) => part.text ?? "").join("\n");
}

/**
 * Load on a channel while the test runs: the agent's server sends numbered messages, the
 * app's server reads them with a cursor (short long-polls), one call after another on each.
 */
function startLoad(app: Client, agent: Client) {
  type Outcome = { ok: boolean; text: string; ms: number; at: number };
  const outcomes: Outcome[] = [];
  const delivered = new Set<number>();
  let acknowledged = 0;
  let cursor = 0;
  let stopped = false;
  const waiters = new Set<() => void>();
  const record = (outcome: Outcome) => {
    outcomes.push(outcome);
    for (const wake of waiters) wake();
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const started = Date.now();
    const result = await client.callTool({ name, arguments: args });
    record({ ok: !result.isError, text: textOf(result), ms: Date.now() - started, at: started });
    return result;
  };
  const sending = (async () => {
    for (let n = acknowledged + 1; !stopped; ) {
      const result = await call(agent, "notify_ui", { channel_id: "outage-load", event: "answer", data: { n } });
      if (!result.isError) acknowledged = n++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const reading = (async () => {
    while (!stopped) {
      const result = await call(app, "poll_ui_messages", { channel_id: "outage-load", after: cursor, wait_ms: 1000 });
      if (result.isError) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const { messages, cursor: next } = structured<{ messages: QueueMessage[]; cursor: number }>(result);
      for (const message of messages) delivered.add((message.data as { n: number }).n);
      cursor = next;
    }
  })();
  const until = async (enough: () => boolean) => {
    while (!enough()) await new Promise<void>((resolve) => waiters.add(resolve));
  };
  return {
    acknowledged: () => acknowledged,
    delivered: () => delivered,
    /** Resolves after `count` more calls. */
    calls: (count: number) => {
      const target = outcomes.length + count;
      return until(() => outcomes.length >= target);
    },
    /** Resolves after `count` more successful calls. */
    successes: (count: number) => {
      const target = outcomes.filter((outcome) => outcome.ok).length + count;
      return until(() => outcomes.filter((outcome) => outcome.ok).length >= target);
    },
    /** A function that tells what happened from now until it is called. */
    since: () => {
      const from = Date.now();
      return () => {
        const window = outcomes.filter((outcome) => outcome.at >= from);
        return {
          errors: window.filter((outcome) => !outcome.ok).map((outcome) => outcome.text),
          durations: window.filter((outcome) => !outcome.ok).map((outcome) => outcome.ms),
          successes: window.filter((outcome) => outcome.ok).length,
        };
      };
    },
    async stop() {
      stopped = true;
      // Read what is left, so that every acknowledged message can be checked.
      await Promise.all([sending, reading]);
      for (;;) {
        const result = structured<{ messages: QueueMessage[]; cursor: number }>(
          await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "outage-load", after: cursor } }),
        );
        for (const message of result.messages) delivered.add((message.data as { n: number }).n);
        cursor = result.cursor;
        if (result.messages.length === 0) break;
      }
    },
  };
}
