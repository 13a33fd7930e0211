/**
 * The two stores, as the contract tests see them: each test file runs the same tests
 * against the file store (a temporary data directory) and the Redis store (its own
 * redis-server, ./redis-server.ts), through one fixture that hides where the channels
 * live. What a test cannot do through the store's interface (make a channel look idle,
 * list what exists) is a method here, done the store's own way.
 */
import { readdir, utimes } from "node:fs/promises";
import { channelDir, sessionFile } from "../../core/paths.js";
import type { Limits } from "../../core/limits.js";
import { FileStore } from "../../store/file/file-store.js";
import { randomBytes } from "node:crypto";
import { createCluster } from "@redis/client";
import { type RunningRedisCluster, startRedisCluster } from "../../deploy/redis-cluster.js";
import { type KeySpace, principalKeys, ROOT_KEYS } from "../../store/redis/keys.js";
import { RedisStore } from "../../store/redis/redis-store.js";
import type { ChannelStore } from "../../store/store.js";
import type { QueueMessage } from "../../protocol/message.js";
import { tempDataDir } from "./helpers.js";
import { type RedisServer, redisSkipReason, startRedis, TEST_DATABASES } from "./redis-server.js";

/** Options of {@link StoreFixture.open}. */
export interface OpenOptions {
  limits?: Partial<Limits>;
  warn?: (message: string) => void;
  fallbackWakeMs?: number;
  /** The clock the store sees readers by (store/readers.ts), to move past a lease without waiting. */
  now?: () => number;
}

/** One store to test, empty when made. */
export interface StoreFixture {
  kind: "file" | "redis" | "redis-cluster";
  /** A data directory of its own (the file store's channels; for Redis, only what else a server keeps there). */
  dataDir: string;
  /** The environment that points a child process (server, writer, watcher) at this store. */
  env: Record<string, string>;
  /** A store object on it; closed by {@link stop}. */
  open(options?: OpenOptions): ChannelStore;
  /** Another store of the same kind, empty, stopped with this one. */
  fresh(): Promise<StoreFixture>;
  /** Makes a channel look unused for `ms` (written and polled that long ago). */
  makeIdle(channelId: string, ms: number): Promise<void>;
  /** Makes a session record look unwritten for `ms`. */
  makeSessionIdle(key: string, ms: number): Promise<void>;
  /** Everything the store holds now (file names or keys), to check that a refused call created nothing. */
  contents(): Promise<string[]>;
  /** Closes every store opened and removes what the fixture made. */
  stop(): Promise<void>;
}

/** A kind of store: how to make a fixture, or why it cannot run here. */
export interface StoreKind {
  name: "file" | "redis" | "redis-cluster";
  /** Why its tests are skipped here; `undefined` when they run. */
  skip: string | undefined;
  start(): Promise<StoreFixture>;
}

/** Both kinds, file first. @throws Error in CI when redis-server is missing. */
export function storeKinds(): StoreKind[] {
  return [
    { name: "file", skip: undefined, start: startFileFixture },
    { name: "redis", skip: redisSkipReason(), start: startRedisFixture },
  ];
}

async function startFileFixture(): Promise<StoreFixture> {
  const { dir, cleanup } = await tempDataDir();
  const others: StoreFixture[] = [];
  return {
    kind: "file",
    dataDir: dir,
    env: { BACKCHANNEL_HOME: dir },
    open: (options = {}) => new FileStore({ dataDir: dir, ...options }),
    async fresh() {
      const other = await startFileFixture();
      others.push(other);
      return other;
    },
    async makeIdle(channelId, ms) {
      const then = new Date(Date.now() - ms);
      await utimes(channelDir(dir, channelId), then, then);
    },
    async makeSessionIdle(key, ms) {
      const then = new Date(Date.now() - ms);
      await utimes(sessionFile(dir, key), then, then);
    },
    contents: async () => (await readdir(dir, { recursive: true })).map(String).sort(),
    async stop() {
      await Promise.all(others.map((other) => other.stop()));
      await cleanup();
    },
  };
}

/** The redis-server of this test process, shared by its Redis fixtures (each on a database of its own). */
let server: RedisServer | undefined;
let fixtures = 0;
let nextDb = 0;

async function startRedisFixture(): Promise<StoreFixture> {
  server ??= await startRedis();
  fixtures += 1;
  if (nextDb >= TEST_DATABASES) throw new Error(`a test process may make at most ${TEST_DATABASES} Redis fixtures`);
  const db = nextDb++;
  const redis = server;
  const { dir, cleanup } = await tempDataDir();
  const stores: RedisStore[] = [];
  const others: StoreFixture[] = [];
  const touch = async (key: string, ms: number) => {
    await redis.admin(db, (client) => client.hSet(key, "touched", String(Date.now() - ms)));
  };
  return {
    kind: "redis",
    dataDir: dir,
    env: { BACKCHANNEL_HOME: dir, BACKCHANNEL_STORE: redis.url(db) },
    open(options = {}) {
      const store = new RedisStore({ url: redis.url(db), checkSettings: false, ...options });
      stores.push(store);
      return store;
    },
    async fresh() {
      const other = await startRedisFixture();
      others.push(other);
      return other;
    },
    makeIdle: (channelId, ms) => touch(ROOT_KEYS.channel(channelId).meta, ms),
    makeSessionIdle: (key, ms) => touch(ROOT_KEYS.session(key), ms),
    contents: () => redis.admin(db, async (client) => (await client.keys("*")).map(String).sort()),
    async stop() {
      await Promise.all(others.map((other) => other.stop()));
      await Promise.all(stores.map((store) => store.close()));
      await cleanup();
      fixtures -= 1;
      if (fixtures === 0 && server) {
        const stopping = server;
        server = undefined;
        await stopping.stop();
      }
    },
  };
}

/**
 * The Redis store on a real Redis Cluster of three primaries and three replicas
 * (deploy/redis-cluster.ts), started once per test process. A cluster has one database,
 * so its fixtures are apart by key space: the first uses the store's own, each `fresh()`
 * one a principal's view of its own (`bc:p:<namespace>:…`, store/redis/keys.ts), where
 * listing and the sweep see only that view's keys.
 */
export function clusterStoreKind(): StoreKind {
  return { name: "redis-cluster", skip: redisSkipReason(), start: () => startClusterFixture(ROOT_KEYS) };
}

/** A plain cluster client, for what a test does to the cluster behind the store's back. */
function clusterAdmin(url: string) {
  return createCluster({ rootNodes: [{ url }], RESP: 3 });
}

type ClusterAdmin = ReturnType<typeof clusterAdmin>;

/** The Redis Cluster of this test process, shared by its cluster fixtures. */
let cluster: RunningRedisCluster | undefined;
let clusterFixtures = 0;

async function startClusterFixture(space: KeySpace, namespace?: string): Promise<StoreFixture> {
  cluster ??= await startRedisCluster();
  clusterFixtures += 1;
  const running = cluster;
  const { dir, cleanup } = await tempDataDir();
  const stores: RedisStore[] = [];
  const others: StoreFixture[] = [];
  const admin = async <T>(commands: (client: ClusterAdmin) => Promise<T>): Promise<T> => {
    const client = clusterAdmin(running.url);
    client.on("error", () => undefined);
    await client.connect();
    try {
      return await commands(client);
    } finally {
      client.destroy();
    }
  };
  const touch = async (key: string, ms: number) => {
    await admin((client) => client.hSet(key, "touched", String(Date.now() - ms)));
  };
  return {
    kind: "redis-cluster",
    dataDir: dir,
    env: { BACKCHANNEL_HOME: dir, BACKCHANNEL_STORE: running.url },
    open(options = {}) {
      const store = new RedisStore({ url: running.url, checkSettings: false, ...options });
      stores.push(store);
      return namespace === undefined ? store : store.forPrincipal(namespace);
    },
    async fresh() {
      const own = randomBytes(16).toString("hex");
      const other = await startClusterFixture(principalKeys(own), own);
      others.push(other);
      return other;
    },
    makeIdle: (channelId, ms) => touch(space.channel(channelId).meta, ms),
    makeSessionIdle: (key, ms) => touch(space.session(key), ms),
    contents: () =>
      admin(async (client) => {
        const keys: string[] = [];
        for (const primary of client.masters) {
          const node = await client.nodeClient(primary);
          keys.push(...(await node.keys(`${space.prefix}*`)).map(String));
        }
        // The store's own key space holds the principals' too: they are other fixtures'.
        return keys.filter((key) => namespace !== undefined || !key.startsWith("bc:p:")).sort();
      }),
    async stop() {
      await Promise.all(others.map((other) => other.stop()));
      await Promise.all(stores.map((store) => store.close()));
      await cleanup();
      clusterFixtures -= 1;
      if (clusterFixtures === 0 && cluster) {
        const stopping = cluster;
        cluster = undefined;
        await stopping.stop();
      }
    },
  };
}

/**
 * Reads the agent queue of `channel` from `cursor` until a poll brings nothing new,
 * putting each message into `received` by its seq (a writer killed mid-run leaves no
 * one appending, so this ends).
 */
export async function readRest(store: ChannelStore, channel: string, after: number, received: Map<number, QueueMessage>): Promise<void> {
  let cursor = after;
  for (;;) {
    const result = await store.poll(channel, "agent", { after: cursor });
    for (const message of result.messages) received.set(message.seq, message);
    cursor = result.cursor;
    if (result.messages.length === 0) return;
  }
}
