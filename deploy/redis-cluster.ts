/**
 * A Redis Cluster of processes on 127.0.0.1: primaries and their replicas, each a
 * `redis-server --cluster-enabled yes` in a folder of its own, joined by
 * `redis-cli --cluster create`. `npm run cluster -- --redis-cluster` runs the app cluster
 * over one (./cluster.ts), and the Redis Cluster tests start it to kill primaries and move
 * slots under a store in use.
 *
 * Every node is durable the way docs/deploy.md asks (`appendonly yes`, `appendfsync
 * always`, `noeviction`), and a failed primary is replaced after `nodeTimeoutMs` (the
 * cluster's `cluster-node-timeout`) by its replica.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";
import { type RunningProcess, startProcess } from "./process.js";

const run = promisify(execFile);

/** The redis-server and redis-cli programs; `$REDIS_SERVER` and `$REDIS_CLI` override them. */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? "redis-server";
export const REDIS_CLI = process.env.REDIS_CLI ?? "redis-cli";

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** How many primaries. Default 3 (the fewest Redis Cluster accepts). */
  primaries?: number;
  /** Replicas per primary. Default 1. */
  replicasPerPrimary?: number;
  /** `cluster-node-timeout`: how long a silent primary is waited for before its replica takes over. Default 1,000 ms. */
  nodeTimeoutMs?: number;
  /** More `--name value` arguments for every node (e.g. an ACL user). */
  extra?: string[];
}

/** One node of the cluster. */
export interface RedisClusterNode {
  readonly port: number;
  /** The process now running (a new one after {@link RunningRedisCluster.restart}). */
  process(): RunningProcess;
}

/** A running Redis Cluster. */
export interface RunningRedisCluster {
  /** Every node, in the order they were started. */
  readonly nodes: readonly RedisClusterNode[];
  /** `redis://127.0.0.1:<port>` of the first node: what a store is given (any node's URL works). */
  readonly url: string;
  /** The folder of the nodes' files. */
  readonly dir: string;
  /** The nodes that are primaries now, by port, as the cluster says (`CLUSTER NODES`, asked of a live node). */
  primaries(): Promise<number[]>;
  /** The port of the primary that owns `key`'s slot now, as the cluster says; `undefined` while none does (a failover). */
  primaryOf(key: string): Promise<number | undefined>;
  /** The ports of the replicas of the node on `port` that the cluster does not take as failed. */
  replicasOf(port: number): Promise<number[]>;
  /** Runs `redis-cli` with `args` against the node on `port`, and resolves with its output. */
  cli(port: number, args: string[]): Promise<string>;
  /**
   * Resolves once every live node says `cluster_state:ok`, every slot has a live primary,
   * and every live replica is in sync with its primary.
   * @throws Error after `timeoutMs` (default 30,000).
   */
  healthy(timeoutMs?: number): Promise<void>;
  /** Kills the node on `port` with `signal` (default SIGKILL) and waits until it is gone. */
  kill(port: number, signal?: NodeJS.Signals): Promise<void>;
  /** Stops the node on `port` where it is (SIGSTOP: it keeps its connections and answers nothing), until {@link resume}. */
  pause(port: number): void;
  /** Lets a node stopped by {@link pause} go on (SIGCONT). */
  resume(port: number): void;
  /** Starts the node on `port` again, on its folder (it rejoins as the cluster sees fit, usually a replica). */
  restart(port: number): Promise<void>;
  /** Stops every node and removes the folder. */
  stop(): Promise<void>;
}

/**
 * Starts the nodes, joins them into a cluster and resolves once it is healthy.
 * @throws Error naming what failed (redis-server or redis-cli missing, a node that would
 *   not start, a cluster that did not become healthy); whatever had started is stopped then.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RunningRedisCluster> {
  const primaries = options.primaries ?? 3;
  const replicas = options.replicasPerPrimary ?? 1;
  const dir = await mkdtemp(join(tmpdir(), "backchannel-redis-cluster-"));
  const processes = new Map<number, RunningProcess>();
  const argsOf = new Map<number, string[]>();
  const launch = async (port: number) => {
    const started = await startProcess({
      name: `redis-server :${port}`,
      program: REDIS_SERVER,
      args: argsOf.get(port)!,
      ready: /Ready to accept connections/,
    });
    processes.set(port, started.process);
  };
  const cli = async (port: number, args: string[]) => (await run(REDIS_CLI, ["-h", "127.0.0.1", "-p", String(port), ...args])).stdout;
  const stopAll = async () => {
    for (const running of processes.values()) await running.stop("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  };
  // A node listens on two ports: its own and its cluster bus. Redis's default bus port
  // (port + 10000) may be out of range or taken by another program's connection, so the
  // bus gets a free port of its own; a node that still fails to start (another program
  // took a port between the probe and the bind) is tried again on new ports.
  const launchNode = async (): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const busPort = await freePort();
      if (busPort === port) continue;
      const nodeDir = join(dir, String(port));
      await mkdir(nodeDir, { recursive: true });
      argsOf.set(port, [
        "--port",
        String(port),
        "--cluster-port",
        String(busPort),
        "--bind",
        "127.0.0.1",
        "--dir",
        nodeDir,
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        String(options.nodeTimeoutMs ?? 1000),
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "",
        "--maxmemory-policy",
        "noeviction",
        // A replica that rejoins (a killed primary restarted) is sent its copy at once, not after 5 s.
        "--repl-diskless-sync-delay",
        "0",
        ...(options.extra ?? []),
      ]);
      try {
        await launch(port);
        return port;
      } catch (error) {
        argsOf.delete(port);
        if (attempt === 3) throw error;
      }
    }
  };
  try {
    const ports: number[] = [];
    for (let index = 0; index < primaries * (1 + replicas); index++) ports.push(await launchNode());
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    await run(REDIS_CLI, ["--cluster", "create", ...addresses, "--cluster-replicas", String(replicas), "--cluster-yes"]);
    const paused = new Set<number>();
    // The nodes that answer: running, and not paused.
    const live = () => ports.filter((port) => !processes.get(port)!.ended() && !paused.has(port));
    const clusterNodes = async () => parseClusterNodes(await cli(live()[0]!, ["cluster", "nodes"]));
    const cluster: RunningRedisCluster = {
      nodes: ports.map((port) => ({ port, process: () => processes.get(port)! })),
      url: `redis://127.0.0.1:${ports[0]}`,
      dir,
      cli,
      async primaries() {
        return (await clusterNodes()).filter((node) => node.primary && !node.failed).map((node) => node.port);
      },
      async primaryOf(key) {
        const slot = Number(await cli(live()[0]!, ["cluster", "keyslot", key]));
        const owner = (await clusterNodes()).find(
          (node) => node.primary && !node.failed && node.slots.some(([from, to]) => slot >= from && slot <= to),
        );
        return owner?.port;
      },
      async replicasOf(port) {
        const nodes = await clusterNodes();
        const primary = nodes.find((node) => node.port === port);
        return nodes.filter((node) => primary !== undefined && node.primaryId === primary.id && !node.failed).map((node) => node.port);
      },
      async healthy(timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        let last = "";
        for (;;) {
          try {
            const states = await Promise.all(live().map((port) => cli(port, ["cluster", "info"])));
            const check = await cli(live()[0]!, ["--cluster", "check", `127.0.0.1:${live()[0]}`]).catch(
              (error: { stdout?: string }) => error.stdout ?? "",
            );
            last = check;
            const replication = await Promise.all(live().map((port) => cli(port, ["info", "replication"])));
            if (
              states.every((state) => /cluster_state:ok/.test(state)) &&
              /\[OK\] All 16384 slots covered/.test(check) &&
              !/\[ERR\]|\[WARNING\]/.test(check) &&
              replication.every(inSync)
            )
              return;
          } catch (error) {
            last = (error as Error).message;
          }
          if (Date.now() > deadline) throw new Error(`the Redis Cluster did not become healthy in ${timeoutMs / 1000} s:\n${last}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
      async kill(port, signal = "SIGKILL") {
        if (paused.delete(port)) processes.get(port)!.child.kill("SIGCONT");
        await processes.get(port)!.stop(signal);
      },
      pause(port) {
        paused.add(port);
        processes.get(port)!.child.kill("SIGSTOP");
      },
      resume(port) {
        paused.delete(port);
        processes.get(port)!.child.kill("SIGCONT");
      },
      async restart(port) {
        await launch(port);
      },
      stop: stopAll,
    };
    await cluster.healthy();
    return cluster;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Whether a node's `INFO replication` says it is in sync: a replica's link to its primary is up, and a primary's replicas are all online. */
function inSync(info: string): boolean {
  if (/role:slave/.test(info)) return /master_link_status:up/.test(info) && !/master_sync_in_progress:1/.test(info);
  return [...info.matchAll(/^slave\d+:.*$/gm)].every(([line]) => /state=online/.test(line));
}

/** One node as `CLUSTER NODES` describes it. */
interface ClusterNodeLine {
  id: string;
  port: number;
  primary: boolean;
  /** Whether the cluster takes it as failed (`fail`) or suspects it (`fail?`). */
  failed: boolean;
  /** The id of its primary (a replica's), else "-". */
  primaryId: string;
  /** The ranges of slots it serves, `[from, to]` (a primary's). */
  slots: [number, number][];
}

/** The lines of `CLUSTER NODES`: `<id> <ip:port@cport> <flags> <primary> <ping> <pong> <epoch> <link> <slot>…`. */
function parseClusterNodes(text: string): ClusterNodeLine[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const fields = line.trim().split(" ");
      const flags = (fields[2] ?? "").split(",");
      const slots = fields
        .slice(8)
        .filter((slot) => /^\d+(-\d+)?$/.test(slot))
        .map((slot): [number, number] => {
          const [from, to = from] = slot.split("-").map(Number) as [number, number?];
          return [from, to];
        });
      return {
        id: fields[0] ?? "",
        port: Number(/:(\d+)@/.exec(fields[1] ?? "")?.[1]),
        primary: flags.includes("master"),
        failed: flags.some((flag) => flag.startsWith("fail")),
        primaryId: fields[3] ?? "-",
        slots,
      };
    });
}
