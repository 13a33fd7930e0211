/**
 * The designs figures are measured for: backchannel on its file store, backchannel on
 * the Redis store (one redis-server, or a Redis Cluster with and without waiting for its
 * replicas), backchannel behind a load balancer (deploy/cluster.ts), and the plain
 * polling baseline (bench/baseline/). Each is described
 * by the processes it runs, where its channels live and how its app reads the agent's
 * messages, so that one harness drives them all.
 */
import { fileURLToPath } from "node:url";
import { type StoreLocation, storeLocationFromEnv } from "../store/open.js";
import { REPLICAS_ENV_VAR, type ReplicaSetting } from "../store/redis/replicated.js";

/** The name of a design, as it appears in the results. */
export type DesignName = "backchannel" | "redis" | "cluster" | "baseline" | "redis-cluster" | "redis-cluster-async";

/** How a design is run. */
export interface Design {
  name: DesignName;
  /** The node arguments of the stdio MCP server (its store from {@link Design.env}). */
  serverArgs: string[];
  /** For a design served over Streamable HTTP instead: its MCP endpoint (then `serverArgs` is unused). */
  mcpUrl?: URL;
  /** The environment of its processes (server, watcher) over the data directory `dataDir`. */
  env(dataDir: string): Record<string, string>;
  /** Where its channels live over `dataDir`, for reading them back. */
  location(dataDir: string): StoreLocation;
  /** The node arguments of the watcher of `channelId`. */
  watcherArgs(channelId: string, follow: boolean): string[];
  /**
   * The app's reading loop: a call to `poll_ui_messages` with `wait_ms: appWaitMs`,
   * started every `appIntervalMs` (0: again as soon as the previous one returns).
   */
  appWaitMs: number;
  /** See {@link Design.appWaitMs}. */
  appIntervalMs: number;
  /** The process id of the store's own server (redis-server), whose idle cost is the design's too. */
  storeServerPid?: number;
  /** The loopback port of the store's own server (redis-server), whose own ceiling the throughput suite measures. */
  storeServerPort?: number;
  /**
   * The Redis store's replica setting (store/redis/replicated.ts) where a suite opens the
   * store in a process of its own (its servers have it from {@link Design.env}). Default:
   * the store's default.
   */
  redisReplicas?: ReplicaSetting;
  /**
   * The period of the timer that decides this design's latency, if any. Samples are
   * taken at a random moment within it, so that the phase of the timer is uniform.
   */
  timerPeriodMs: { watcher: number; app: number };
}

const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const BASELINE_SERVER = fileURLToPath(new URL("./baseline/server.js", import.meta.url));
const BASELINE_WATCHER = fileURLToPath(new URL("./baseline/watcher.js", import.meta.url));

/** The environment and location of a design on the file store in `dataDir`. */
const inDataDir = {
  env: (dataDir: string) => ({ BACKCHANNEL_HOME: dataDir, BACKCHANNEL_STORE: "" }),
  location: (dataDir: string): StoreLocation => ({ kind: "file", dataDir }),
};

/** backchannel: event-driven long-polls and watcher, durable atomic writes. */
export const BACKCHANNEL: Design = {
  name: "backchannel",
  serverArgs: [CLI, "serve"],
  ...inDataDir,
  // --allow-missing: a bench channel is made by its first message, and a round trip arms
  // the watcher before it (the Redis store, unlike the file store, makes nothing on a read).
  watcherArgs: (channelId, follow) => [CLI, "watch", channelId, "--allow-missing", ...(follow ? ["--follow"] : [])],
  appWaitMs: 30_000,
  appIntervalMs: 0,
  // No timer decides its latency; a short random pause still spreads the samples.
  timerPeriodMs: { watcher: 50, app: 50 },
};

/** The baseline: the watcher reads every 500 ms, the app polls every 1,200 ms. */
export const BASELINE: Design = {
  name: "baseline",
  serverArgs: [BASELINE_SERVER],
  ...inDataDir,
  watcherArgs: (channelId, follow) => [BASELINE_WATCHER, channelId, ...(follow ? ["--follow"] : [])],
  appWaitMs: 0,
  appIntervalMs: 1200,
  timerPeriodMs: { watcher: 500, app: 1200 },
};

/**
 * backchannel on the Redis store (its data directory then holds no channel): the same
 * server, watcher and app loop, with `BACKCHANNEL_STORE` set. Each data directory a suite
 * makes gets a Redis database of its own, as it would get an empty folder.
 * @param urlOf the URL of database `db` of the Redis server.
 * @param databases how many databases that server has.
 * @param server the Redis server's process id, and its loopback port for its own ceiling (none: not measured).
 */
export function redisDesign(urlOf: (db: number) => string, databases: number, server: { pid: number | undefined; port?: number }): Design {
  const dbs = new Map<string, number>();
  const urlFor = (dataDir: string) => {
    if (!dbs.has(dataDir)) dbs.set(dataDir, dbs.size % databases);
    return urlOf(dbs.get(dataDir)!);
  };
  return {
    ...BACKCHANNEL,
    name: "redis",
    storeServerPid: server.pid,
    storeServerPort: server.port,
    env: (dataDir) => ({ BACKCHANNEL_HOME: dataDir, BACKCHANNEL_STORE: urlFor(dataDir) }),
    location: (dataDir) => storeLocationFromEnv({}, urlFor(dataDir)),
  };
}

/** backchannel on its file store and the baseline, in the order they are reported. */
export const DESIGNS: readonly Design[] = [BACKCHANNEL, BASELINE];

/**
 * backchannel on a Redis Cluster (deploy/redis-cluster.ts) whose node `url` names: the
 * same server, watcher and app loop. A cluster has one database, so every data
 * directory shares its channels: a suite clears it between designs.
 * @param replicas the store's replica setting: "all" (the default: WAIT for every
 *   replica that could take a primary's place) or 0 ("redis-cluster-async": no WAIT).
 */
export function redisClusterDesign(url: string, replicas: "all" | 0): Design {
  return {
    ...BACKCHANNEL,
    name: replicas === 0 ? "redis-cluster-async" : "redis-cluster",
    env: (dataDir) => ({ BACKCHANNEL_HOME: dataDir, BACKCHANNEL_STORE: url, [REPLICAS_ENV_VAR]: String(replicas) }),
    location: () => storeLocationFromEnv({}, url),
    redisReplicas: replicas,
  };
}

/**
 * backchannel as a remote server: the app and the agent are SDK clients over
 * Streamable HTTP to `mcpUrl` (nginx in front of replicas over one Redis), and the
 * watcher is the remote one (`watch --url`). `redisUrl` is the replicas' store, for
 * reading channels back.
 */
export function clusterDesign(mcpUrl: URL, redisUrl: string): Design {
  return {
    ...BACKCHANNEL,
    name: "cluster",
    serverArgs: [],
    mcpUrl,
    env: (dataDir) => ({ BACKCHANNEL_HOME: dataDir, BACKCHANNEL_STORE: "" }),
    location: () => storeLocationFromEnv({}, redisUrl),
    watcherArgs: (channelId, follow) => [CLI, "watch", channelId, "--url", mcpUrl.href, ...(follow ? ["--follow"] : [])],
  };
}
