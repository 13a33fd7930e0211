/**
 * The cluster: one redis-server (or a Redis Cluster of three primaries and three
 * replicas, ./redis-cluster.ts), several `backchannel serve --http` replicas over it,
 * and nginx as a round-robin load balancer in front of them, in a temporary folder of
 * its own. `npm run cluster` runs it (./main.ts) and the cluster tests start it; the
 * replicas share nothing but the store, so any request may land on any replica.
 *
 * Everything listens on 127.0.0.1. A replica is started with the arguments given
 * (e.g. authentication flags) after `serve --http --host 127.0.0.1 --port 0 --store …`.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type AccessLogEntry, nginxConfig, parseAccessLog } from "./nginx-config.js";
import { freePort } from "./free-port.js";
import { type RunningProcess, startProcess } from "./process.js";
import { type RunningRedisCluster, startRedisCluster } from "./redis-cluster.js";

/** The `backchannel` command of this build. */
const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/** The browser host's page (in playground mode), served by nginx at `/` with its app frame at `/frame`: it connects to `/mcp` on its own origin, so through the balancer. */
const HOST_PAGE = fileURLToPath(new URL("../web/page/index.html", import.meta.url));
const HOST_FRAME = fileURLToPath(new URL("../web/page/frame.html", import.meta.url));

/** Debian's nginx; `$NGINX` overrides it. */
export const NGINX = process.env.NGINX ?? "/usr/sbin/nginx";

/** The redis-server program; `$REDIS_SERVER` overrides it. */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? "redis-server";

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** How many replicas. Default 2. */
  replicas?: number;
  /** The port nginx listens on. Default 0: a free one. */
  port?: number;
  /**
   * More arguments for every replica's `serve` (e.g. authentication flags), or a function
   * of the cluster's MCP endpoint that returns them (for `--public-url`).
   */
  replicaArgs?: string[] | ((mcpUrl: URL) => string[]);
  /** Added to every replica's environment. */
  replicaEnv?: Record<string, string>;
  /** redis-server's `appendfsync`. Default `always` (an acknowledged message is on disk; see docs/deploy.md). */
  appendfsync?: "always" | "everysec";
  /** A Redis Cluster of three primaries and three replicas (./redis-cluster.ts) instead of one redis-server. Default false. */
  redisCluster?: boolean;
}

/** One replica: a `backchannel serve --http` process. */
export interface Replica {
  readonly process: RunningProcess;
  /** `127.0.0.1:<port>`, as nginx's `$upstream_addr` names it. */
  readonly address: string;
}

/** A running cluster. */
export interface Cluster {
  /** The public URL of the balancer, e.g. `http://127.0.0.1:8080/` (the host page is there). */
  readonly url: URL;
  /** The MCP endpoint through the balancer: `<url>mcp`. */
  readonly mcpUrl: URL;
  /** The folder of the config, the logs and Redis's files. */
  readonly dir: string;
  /** The Redis URL the replicas share (a Redis Cluster's: its first node's). */
  readonly redisUrl: string;
  /** The Redis processes: the one redis-server, or every node of the Redis Cluster. */
  readonly redis: readonly RunningProcess[];
  /** The Redis Cluster, when the cluster runs over one. */
  readonly redisCluster?: RunningRedisCluster;
  readonly replicas: readonly Replica[];
  readonly nginx: RunningProcess;
  /** nginx's access log so far, parsed. A request still in flight is not in it yet: see {@link settled}. */
  accessLog(): Promise<AccessLogEntry[]>;
  /**
   * Resolves once nginx has no request in flight (its status page counts only the
   * request asking), so that the access log holds every request made so far.
   * @throws Error when requests are still in flight after `timeoutMs` (default 10,000).
   */
  settled(timeoutMs?: number): Promise<void>;
  /** Stops nginx, the replicas and Redis, and removes the folder. */
  stop(): Promise<void>;
}

/**
 * Starts Redis, the replicas and nginx, in that order, and resolves once nginx accepts
 * connections.
 * @throws Error naming the program that failed to start, with its output (e.g. nginx
 *   or redis-server not installed); whatever had started is stopped then.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), "backchannel-cluster-"));
  // nginx's workers run as nobody when it is started as root: they must reach the folder.
  await chmod(dir, 0o755);
  const started: RunningProcess[] = [];
  let redisCluster: RunningRedisCluster | undefined;
  const stopAll = async () => {
    for (const running of started.reverse()) await running.stop();
    await redisCluster?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    let redisUrl: string;
    let redis: RunningProcess[];
    if (options.redisCluster) {
      redisCluster = await startRedisCluster();
      redisUrl = redisCluster.url;
      redis = redisCluster.nodes.map((node) => node.process());
    } else {
      const server = await startRedisServer(join(dir, "redis"), options.appendfsync ?? "always");
      started.push(server.process);
      redisUrl = server.url;
      redis = [server.process];
    }

    // The port is chosen first: a replica may need the public URL.
    const port = options.port || (await freePort());
    const url = new URL(`http://127.0.0.1:${port}/`);
    const mcpUrl = new URL("/mcp", url);
    const replicaArgs = typeof options.replicaArgs === "function" ? options.replicaArgs(mcpUrl) : (options.replicaArgs ?? []);
    const replicas: Replica[] = [];
    for (let index = 1; index <= (options.replicas ?? 2); index += 1) {
      const replica = await startProcess({
        name: `replica ${index}`,
        program: process.execPath,
        args: [CLI, "serve", "--http", "--host", "127.0.0.1", "--port", "0", "--store", redisUrl, ...replicaArgs],
        env: options.replicaEnv ?? {},
        ready: /MCP server at http:\/\/(127\.0\.0\.1:\d+)\//,
      });
      started.push(replica.process);
      replicas.push({ process: replica.process, address: replica.match[1]! });
    }

    await writeFile(join(dir, "index.html"), await readFile(HOST_PAGE), { mode: 0o644 });
    await writeFile(join(dir, "frame.html"), await readFile(HOST_FRAME), { mode: 0o644 });
    const config = join(dir, "nginx.conf");
    await writeFile(config, nginxConfig({ listen: `127.0.0.1:${port}`, upstreams: replicas.map((replica) => replica.address), dir, pageRoot: dir }));
    const nginx = await startProcess({
      name: "nginx",
      program: NGINX,
      args: ["-p", dir, "-c", config, "-e", "stderr"],
      ready: /start worker process/,
    });
    started.push(nginx.process);

    return {
      url,
      mcpUrl,
      dir,
      redisUrl,
      redis,
      ...(redisCluster && { redisCluster }),
      replicas,
      nginx: nginx.process,
      accessLog: async () => parseAccessLog(await readFile(join(dir, "access.log"), "utf8").catch(() => "")),
      settled: (timeoutMs = 10_000) => waitUntilIdle(new URL("/nginx_status", url), timeoutMs),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Starts one durable redis-server with its files in `folder`; resolves once it is ready. */
async function startRedisServer(folder: string, appendfsync: "always" | "everysec"): Promise<{ process: RunningProcess; url: string }> {
  const port = await freePort();
  await mkdir(folder);
  const started = await startProcess({
    name: "redis-server",
    program: REDIS_SERVER,
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      folder,
      "--appendonly",
      "yes",
      "--appendfsync",
      appendfsync,
      "--save",
      "",
      "--maxmemory-policy",
      "noeviction",
    ],
    ready: /Ready to accept connections/,
  });
  return { process: started.process, url: `redis://127.0.0.1:${port}/0` };
}

/** Polls nginx's status page at `statusUrl` until the only request it is writing is that one. */
async function waitUntilIdle(statusUrl: URL, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let writing = "";
  while (Date.now() < deadline) {
    const status = await (await fetch(statusUrl)).text();
    writing = status.match(/Writing: (\d+)/)?.[1] ?? "";
    if (writing === "1") return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nginx still has ${Number(writing) - 1} requests in flight after ${timeoutMs} ms`);
}
