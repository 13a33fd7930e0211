/**
 * What only the Redis store has, on a real redis-server: its URL (checked, never shown
 * with its password), its warnings about settings that could lose data, its errors when
 * Redis refuses or is away (and the server that stays up and recovers), one subscriber
 * connection per process, one hash slot per channel (checked on a cluster-enabled
 * Redis), and that the watcher and the status line load no Redis client over the file store.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePort } from "../deploy/free-port.js";
import { InvalidStoreUrlError } from "../store/redis/location.js";
import { keyList, ROOT_KEYS } from "../store/redis/keys.js";
import { RedisStore } from "../store/redis/redis-store.js";
import { StoreFullError, StoreUnavailableError } from "../store/redis/errors.js";
import { settingsWarnings } from "../store/redis/health.js";
import { storeLocationFromEnv } from "../store/open.js";
import { CLI, connectServer, spawnWatcher, stderrOf, structured, tempDataDir, waitUntil } from "./support/helpers.js";
import { type RedisServer, redisSkipReason, startRedis } from "./support/redis-server.js";

const skip = redisSkipReason();

describe("the store URL", () => {
  test("BACKCHANNEL_STORE chooses Redis; unset or empty means the file store exactly as before", () => {
    assert.deepEqual(storeLocationFromEnv({ BACKCHANNEL_HOME: "/tmp/x" }), { kind: "file", dataDir: "/tmp/x" });
    assert.deepEqual(storeLocationFromEnv({ BACKCHANNEL_HOME: "/tmp/x", BACKCHANNEL_STORE: " " }), { kind: "file", dataDir: "/tmp/x" });
    assert.deepEqual(storeLocationFromEnv({ BACKCHANNEL_STORE: "redis://u:secret@h.example:6380/2" }), {
      kind: "redis",
      url: "redis://u:secret@h.example:6380/2",
      shown: "redis://u:***@h.example:6380/2",
    });
    assert.equal(storeLocationFromEnv({}, "rediss://h.example").kind, "redis", "serve --store wins, TLS too");
  });

  for (const [setting, reason] of [
    ["postgres://h/1", /not a redis:\/\/ or rediss:\/\/ URL/],
    ["redis://:secret@/3", /names no host|not a URL/],
    ["redis://:secret@h/db1", /is not a database number/],
    ["redis://:secret@h/1?x=y", /query or a fragment/],
    ["/var/lib/backchannel", /not a redis:\/\/ or rediss:\/\/ URL/],
  ] as const) {
    test(`${JSON.stringify(setting)} is refused, with what to use instead and never the password`, () => {
      assert.throws(
        () => storeLocationFromEnv({ BACKCHANNEL_STORE: setting }),
        (error: unknown) => {
          assert.ok(error instanceof InvalidStoreUrlError);
          assert.match(error.message, reason);
          assert.match(error.message, /redis:\/\/\[user:password@\]host\[:port\]\[\/db\]/);
          assert.doesNotMatch(error.message, /secret/);
          return true;
        },
      );
    });
  }

  test("serve --store with a bad URL exits 1 with the reason", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--store", "redis://:secret@h/x"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    assert.equal(code, 1);
    assert.match(stderr, /backchannel serve: the store redis:\/\/:\*\*\*@h\/x is not usable: its path "\/x" is not a database number/);
  });
});

describe("warnings about settings that could lose data", () => {
  test("eviction, persistence off, snapshots only, a lazy fsync; none for the durable settings", () => {
    assert.deepEqual(settingsWarnings({ "maxmemory-policy": "noeviction", appendonly: "yes", appendfsync: "always", save: "" }), []);
    const [eviction, persistence] = settingsWarnings({ "maxmemory-policy": "allkeys-lru", appendonly: "no", appendfsync: "everysec", save: "" });
    assert.match(eviction!, /maxmemory-policy is allkeys-lru: .* may evict .* Set "maxmemory-policy noeviction"/);
    assert.match(
      persistence!,
      /persistence is off .* a restart of Redis loses every message not yet read, every document and every session record \(what is sent after it is delivered, from seq 1 again\)\. Set "appendonly yes" and "appendfsync always"/,
    );
    assert.match(settingsWarnings({ appendonly: "no", save: "3600 1" })[0]!, /only snapshots persist/);
    assert.match(
      settingsWarnings({ appendonly: "yes", appendfsync: "everysec" })[0]!,
      /appendfsync is everysec: a crash .* Set "appendfsync always"/,
    );
    assert.deepEqual(settingsWarnings({}), [], "a Redis that forbids CONFIG GET is not accused of anything");
  });

  test("a server on a Redis that may evict and keeps nothing on disk says so on stderr at start", { skip }, async () => {
    const risky = await startRedis({ appendonly: "no", extra: ["--maxmemory-policy", "volatile-lru"] });
    const { dir, cleanup } = await tempDataDir();
    const client = await connectServer(dir, { BACKCHANNEL_STORE: risky.url(0) });
    try {
      await client.callTool({ name: "notify_ui", arguments: { channel_id: "warned", event: "e" } });
      const stderr = await waitFor(() => stderrOf(client), /persistence is off/);
      assert.match(stderr, /MCP server on stdio, channels in the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0/);
      assert.match(stderr, /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0: maxmemory-policy is volatile-lru/);
    } finally {
      await client.close();
      await cleanup();
      await risky.stop();
    }
  });
});

describe("on a real redis-server", { skip }, () => {
  let redis: RedisServer;
  let home: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    redis = await startRedis();
    home = await tempDataDir();
  });
  after(async () => {
    await home.cleanup();
    await redis.stop();
  });

  test("a durable Redis gets no warning, and the URL's password never reaches stderr", async () => {
    await redis.admin(0, (client) => client.aclSetUser("app", ["on", ">s3cret-pw", "~*", "&*", "+@all"]));
    const client = await connectServer(home.dir, { BACKCHANNEL_STORE: `redis://app:s3cret-pw@127.0.0.1:${redis.port}/1` });
    try {
      structured(await client.callTool({ name: "notify_ui", arguments: { channel_id: "quiet", event: "e" } }));
      assert.match(stderrOf(client), /channels in the Redis store at redis:\/\/app:\*\*\*@127\.0\.0\.1:\d+\/1/);
      assert.doesNotMatch(stderrOf(client), /warn|evict|persistence|s3cret/i);
    } finally {
      await client.close();
    }
  });

  test("wrong credentials: each call fails with a clear error naming the store, without the password", async () => {
    const store = new RedisStore({ url: `redis://app:wrong-pw@127.0.0.1:${redis.port}/1`, warn: () => undefined, readyWaitMs: 300 });
    try {
      await assert.rejects(store.append("denied", "ui", "e"), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.match(
          error.message,
          /the Redis store at redis:\/\/app:\*\*\*@127\.0\.0\.1:\d+\/1 is unreachable \(.*(WRONGPASS|invalid username-password).*\)/,
        );
        assert.doesNotMatch(error.message, /wrong-pw/);
        return true;
      });
    } finally {
      await store.close();
    }
  });

  test("a write into a Redis out of memory is refused as full, saying what still works; nothing queued is lost, and it works again after", async () => {
    const store = new RedisStore({ url: redis.url(2), checkSettings: false });
    try {
      await store.append("oom", "ui", "e", { n: 1 });
      await redis.admin(0, (client) => client.configSet("maxmemory", "1"));
      await assert.rejects(store.append("oom", "ui", "e", { n: 2 }), (error: unknown) => {
        assert.ok(error instanceof StoreFullError);
        assert.match(
          error.message,
          /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/2 is full \(maxmemory\): nothing was written\. .*raise its maxmemory/,
        );
        return true;
      });
      await redis.admin(0, (client) => client.configSet("maxmemory", "0"));
      assert.deepEqual(
        (await store.peek("oom", "ui")).map((m) => m.data),
        [{ n: 1 }],
      );
      assert.equal((await store.append("oom", "ui", "e", { n: 3 })).seq, 2);
    } finally {
      await redis.admin(0, (client) => client.configSet("maxmemory", "0"));
      await store.close();
    }
  });

  test("one subscriber connection per process, however many waiters", async () => {
    const client = await connectServer(home.dir, { BACKCHANNEL_STORE: redis.url(3) });
    let polls: Promise<unknown>[] = [];
    try {
      // Ten long-polls on ten channels at once, plus the agent inbox the first poll starts.
      polls = Array.from({ length: 10 }, (_, index) =>
        client.callTool({ name: "poll_agent_messages", arguments: { channel_id: `many-${index}`, after: 0, wait_ms: 20_000 } }),
      );
      // Every waited-on queue gets subscribed (the calls reach the server one by one).
      await waitFor(async () => {
        const channels = await redis.admin(0, (admin) => admin.sendCommand(["PUBSUB", "SHARDCHANNELS", "bc:{many-*}:wake:agent"]));
        return `${(channels as unknown as string[]).length} subscribed`;
      }, /^10 subscribed$/);
      assert.deepEqual((await clientNames()).sort(), ["backchannel:store", "backchannel:store:wake"], "one command and one subscriber connection");
      const agent = new RedisStore({ url: redis.url(3), checkSettings: false });
      try {
        for (let index = 0; index < 10; index++) await agent.append(`many-${index}`, "agent", "ask", { index });
      } finally {
        await agent.close();
      }
      const results = (await Promise.all(polls)).map((result) =>
        structured<{ messages: { data: { index: number } }[] }>(result as { isError?: boolean }),
      );
      assert.deepEqual(
        results.map((result) => result.messages[0]?.data.index),
        Array.from({ length: 10 }, (_, index) => index),
      );
    } finally {
      await client.close();
      await Promise.allSettled(polls);
    }

    async function clientNames(): Promise<string[]> {
      const list = String(await redis.admin(0, (admin) => admin.sendCommand(["CLIENT", "LIST"])));
      return [...list.matchAll(/ name=(backchannel:\S*) .* db=3 /g)].map((match) => match[1]!);
    }
  });

  test("an idle watcher reads its queue on wake-ups only, with a 30 s safety net, not every 5 s as over files", async () => {
    const readsOfQueue = async () => {
      const stats = String(await redis.admin(0, (admin) => admin.sendCommand(["INFO", "commandstats"])));
      return Number(/cmdstat_xrange:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    };
    const watcher = spawnWatcher(home.dir, ["idle-watch", "--allow-missing", "--timeout", "60"], { BACKCHANNEL_STORE: redis.url(4) });
    try {
      await watcher.ready();
      const armed = await readsOfQueue();
      // Absence over a span can only be seen by waiting it out: longer than the file store's 5 s.
      await new Promise((resolve) => setTimeout(resolve, 6500));
      assert.equal(await readsOfQueue(), armed, "no read of the queue while nothing changed");
      const agent = new RedisStore({ url: redis.url(4), checkSettings: false });
      try {
        await agent.append("idle-watch", "agent", "ask", { text: "still awake?" });
      } finally {
        await agent.close();
      }
      assert.equal(await watcher.exited, 0, "a message still wakes it at once");
    } finally {
      watcher.child.kill();
    }
  });

  test("Redis unreachable at start: the server stays up, every call fails fast and clearly, and it recovers by itself", async () => {
    const later = await startRedis();
    const url = later.url(0);
    await later.kill();
    const client = await connectServer(home.dir, { BACKCHANNEL_STORE: url });
    try {
      for (let call = 0; call < 3; call++) {
        const started = Date.now();
        const result = await client.callTool({ name: "notify_ui", arguments: { channel_id: "later", event: "e" } });
        const took = Date.now() - started;
        assert.equal(result.isError, true);
        const [content] = result.content as { text: string }[];
        assert.match(
          content!.text,
          /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable \(.*ECONNREFUSED.*\): nothing was read or written. Check that Redis is running/,
        );
        assert.ok(call === 0 || took < 1000, `call ${call} failed in ${took} ms`);
      }
      assert.match(await waitFor(() => stderrOf(client), /cannot reach the Redis store/), /retrying, and calls fail until it answers/);
      await later.restart();
      const recovered = await waitFor(async () => {
        const result = await client.callTool({ name: "notify_ui", arguments: { channel_id: "later", event: "e" } });
        return result.isError ? "" : JSON.stringify(result.structuredContent);
      }, /"seq":1/);
      assert.match(recovered, /"pending":1/);
      assert.match(stderrOf(client), /the Redis store at .* answers again/);
    } finally {
      await client.close();
      await later.stop();
    }
  });

  test("Redis expires a channel's keys after the TTL only while both queues are empty", async () => {
    const store = new RedisStore({ url: redis.url(4), checkSettings: false, limits: { channelTtlMs: 60_000 } });
    const ttls = () => redis.admin(4, async (client) => Promise.all(keyList(ROOT_KEYS.channel("expiring")).map((key) => client.pTTL(key))));
    try {
      await store.updateState("expiring", "doc", () => ({ kept: "while used" }));
      await store.append("expiring", "agent", "ask");
      // A key that does not exist reads -2; one without an expiry -1.
      assert.ok(
        (await ttls()).every((ttl) => ttl === -1 || ttl === -2),
        "holding a message: nothing expires",
      );
      await store.poll("expiring", "agent");
      const [meta, ui, agent, state] = await ttls();
      for (const ttl of [meta!, agent!, state!]) assert.ok(ttl > 50_000 && ttl <= 60_000, `empty: expires after the TTL (${ttl} ms left)`);
      assert.equal(ui, -2, "a queue never written has no key");
      await store.append("expiring", "ui", "answer");
      assert.ok(
        (await ttls()).every((ttl) => ttl === -1 || ttl === -2),
        "a message again: the expiry is lifted",
      );
    } finally {
      await store.close();
    }
  });

  test("a saved app that is not one (written by hand) is an error that says what to do, and is left out (and reported) when listing", async () => {
    const warnings: string[] = [];
    const store = new RedisStore({ url: redis.url(5), checkSettings: false, warn: (message) => warnings.push(message) });
    try {
      await redis.admin(5, (client) => client.set("bc:app:{damaged}", "{not json"));
      await assert.rejects(store.apps.read("damaged"), /the saved app damaged cannot be read \(it is not JSON\); open the app again/);
      assert.deepEqual(await store.apps.summaries(await store.apps.names()), []);
      assert.equal(warnings.length, 1, warnings.join("\n"));
    } finally {
      await store.close();
    }
  });

  test("every key of a channel, and its wake channels, share one hash tag", async () => {
    const keys = ROOT_KEYS.channel("tagged-1");
    for (const name of [...keyList(keys), ROOT_KEYS.queueWake("tagged-1", "ui"), ROOT_KEYS.queueWake("tagged-1", "agent")]) {
      assert.equal(/\{([^}]*)\}/.exec(name)?.[1], "tagged-1", name);
    }
    assert.equal(/\{([^}]*)\}/.exec(ROOT_KEYS.session("claude-7-00000000000000000007"))?.[1], "claude-7-00000000000000000007");
  });
});

describe("on Redis Cluster (one node holding every slot)", { skip }, () => {
  test("every script's keys are in one slot: the whole store works where a cross-slot script would fail", async () => {
    // The bus port is chosen free: Redis's default (port + 10000) may be taken or out of range.
    const busPort = String(await freePort());
    const cluster = await startRedis({ extra: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", busPort] });
    try {
      await cluster.admin(0, async (admin) => {
        await admin.sendCommand(["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
        for (let attempt = 0; !/cluster_state:ok/.test(String(await admin.sendCommand(["CLUSTER", "INFO"]))); attempt++) {
          if (attempt > 100) throw new Error("the cluster did not become ok");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // A script over two channels' keys is refused here: the check this test relies on.
        await assert.rejects(
          admin.sendCommand(["EVAL", "#!lua\nreturn redis.call('EXISTS', KEYS[1], KEYS[2])", "2", "bc:{a}:meta", "bc:{b}:meta"]),
          /CROSSSLOT|different slots/,
        );
      });
      const store = new RedisStore({ url: cluster.url(0), checkSettings: false, limits: { channelTtlMs: 60_000 } });
      try {
        const waiting = store.poll("slot-a", "agent", { after: 0, waitMs: 10_000 });
        await store.append("slot-a", "agent", "ask", { q: 1 });
        assert.equal((await waiting).messages.length, 1);
        await store.append("slot-b", "ui", "answer", { a: 1 });
        assert.equal((await store.poll("slot-b", "ui")).messages.length, 1);
        await store.updateState("slot-a", "doc", () => ({ d: 1 }));
        assert.deepEqual(await store.readState("slot-a", "doc"), { d: 1 });
        await store.sessions.update("claude-9-00000000000000000009", (record) => ({ ...record, channels: [{ id: "slot-a", app: "reader" }] }));
        assert.equal((await store.sessions.read("claude-9-00000000000000000009")).channels.length, 1);
        assert.deepEqual((await store.listChannels()).map((channel) => channel.id).sort(), ["slot-a", "slot-b"]);
        assert.deepEqual(await store.removeIdleChannels(Date.now() + 120_000), ["slot-b"], "slot-a still holds its message");
        await store.remove("slot-a");
        assert.deepEqual(await store.listChannels(), []);
      } finally {
        await store.close();
      }
    } finally {
      await cluster.stop();
    }
  });
});

describe("start-up over the file store loads no Redis client", () => {
  /** Runs the CLI with a preload that reports, on exit, whether any module of node-redis was loaded. */
  async function loadsRedis(args: string[], env: Record<string, string>, stdin = ""): Promise<{ redis: boolean; stdout: string }> {
    const { dir, cleanup } = await tempDataDir();
    try {
      const probe = join(dir, "probe.mjs");
      await writeFile(
        probe,
        `import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
process.on("exit", () => process.stderr.write("REDIS-LOADED=" + Object.keys(require.cache).some((path) => path.includes("@redis")) + "\\n"));
`,
      );
      const child = spawn(process.execPath, ["--import", probe, CLI, ...args], {
        env: { ...process.env, BACKCHANNEL_HOME: dir, ...env },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdin.end(stdin);
      await new Promise((resolve) => child.on("exit", resolve));
      const match = /REDIS-LOADED=(true|false)/.exec(stderr);
      assert.ok(match, `the probe reported: ${stderr}`);
      return { redis: match[1] === "true", stdout };
    } finally {
      await cleanup();
    }
  }

  test("the watcher and the status line over the file store never load @redis/client", async () => {
    const env = { BACKCHANNEL_STORE: "" };
    assert.equal((await loadsRedis(["watch", "no-redis", "--timeout", "0.2"], env)).redis, false, "watch");
    assert.equal((await loadsRedis(["statusline"], { ...env, CLAUDE_PID: "1" }, "{}")).redis, false, "statusline");
  });

  test("the probe sees it when they do read Redis", { skip }, async () => {
    const redis = await startRedis();
    try {
      const env = { BACKCHANNEL_STORE: redis.url(0) };
      assert.equal((await loadsRedis(["watch", "with-redis", "--timeout", "0.2"], env)).redis, true, "watch");
      assert.equal((await loadsRedis(["statusline"], { ...env, CLAUDE_PID: "1" }, "{}")).redis, true, "statusline");
    } finally {
      await redis.stop();
    }
  });
});

describe("the watcher and the status line over Redis", { skip }, () => {
  test("the watcher (exit and follow) wakes on a message written by a server, and exits 1 when Redis is not there", async () => {
    const redis = await startRedis();
    const { dir, cleanup } = await tempDataDir();
    const env = { BACKCHANNEL_STORE: redis.url(0) };
    const server = await connectServer(dir, env);
    try {
      const follower = spawnWatcher(dir, ["redis-watched", "--follow", "--allow-missing", "--timeout", "30"], env);
      const watcher = spawnWatcher(dir, ["redis-watched", "--allow-missing", "--timeout", "30"], env);
      await Promise.all([watcher.ready(), follower.ready()]);
      await server.callTool({ name: "notify_agent", arguments: { channel_id: "redis-watched", event: "ask", data: { question: "over Redis?" } } });
      assert.equal(await watcher.exited, 0);
      assert.match(watcher.stdout(), /1 message waiting on redis-watched \(ask\)/);
      const [line] = await follower.lines(1);
      assert.match(line!, /redis-watched #1 ask: over Redis\?/);
      follower.child.kill();
      await follower.exited;
      await redis.kill();
      const stranded = spawnWatcher(dir, ["redis-watched", "--timeout", "30"], env);
      assert.equal(await stranded.exited, 1);
      assert.match(
        stranded.stderr(),
        /the Redis store at redis:\/\/127\.0\.0\.1:\d+\/0 is unreachable .* Is BACKCHANNEL_STORE the same as the server's\?/,
      );
    } finally {
      await server.close();
      await cleanup();
      await redis.stop();
    }
  });
});

describe("a watcher over Redis that finds its message at once", { skip }, () => {
  test("exits at once, every time: no connection made while it closed keeps the process alive", { timeout: 120_000 }, async () => {
    const redis = await startRedis();
    const { dir, cleanup } = await tempDataDir();
    const env = { BACKCHANNEL_STORE: redis.url(5) };
    const server = await connectServer(dir, env);
    try {
      await server.callTool({ name: "notify_agent", arguments: { channel_id: "already-waiting", event: "ask", data: { question: "here?" } } });
      // The subscriber connection is being made as the watcher finds the message and closes;
      // in about one start in three it used to come up after the close and hold the process.
      for (let run = 1; run <= 12; run++) {
        const watcher = spawnWatcher(dir, ["already-waiting", "--timeout", "60"], env);
        const timer = setTimeout(() => watcher.child.kill("SIGKILL"), 15_000); // a safety net: a hung watcher fails, not the run
        const code = await watcher.exited;
        clearTimeout(timer);
        assert.equal(code, 0, `run ${run}: the watcher exited (killed when it hung 15 s): ${watcher.stdout()}${watcher.stderr()}`);
        assert.match(watcher.stdout(), /1 message waiting on already-waiting \(ask\)/);
      }
    } finally {
      await server.close();
      await cleanup();
      await redis.stop();
    }
  });
});

/** Reads `read` until its text matches `pattern` (at most 20 s), and returns that text. */
function waitFor(read: () => string | Promise<string>, pattern: RegExp): Promise<string> {
  let text = "";
  return waitUntil(
    async () => {
      text = await read();
      return pattern.test(text) && text;
    },
    () => `${pattern} matched (last read: ${text})`,
    { timeoutMs: 20_000 },
  );
}
