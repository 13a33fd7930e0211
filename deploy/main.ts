#!/usr/bin/env node
/**
 * `npm run cluster`: starts the cluster of ./cluster.ts (redis-server, two
 * `backchannel serve --http` replicas, nginx in front) on this machine, prints its
 * public URL, and stops everything on Ctrl-C.
 *
 *     node dist/deploy/main.js [--replicas N] [--port N] [--redis-cluster] [-- <more serve arguments>]
 *
 * `--redis-cluster` runs the replicas over a Redis Cluster of three primaries and three
 * replicas (./redis-cluster.ts) instead of one redis-server; a node of it that exits is
 * said, and the rest go on (its replica takes over). Arguments after `--` go to every
 * replica's `backchannel serve` (e.g. authentication flags). `--help` says so.
 */
import { parseArgs } from "node:util";
import { startCluster } from "./cluster.js";

const USAGE = `Usage: npm run cluster -- [--replicas N] [--port N] [--redis-cluster] [-- <serve arguments>]

Starts redis-server, N backchannel serve --http replicas and nginx in front of them on
127.0.0.1, prints the URL, and stops everything on Ctrl-C.

  --replicas N       backchannel replicas, 1 to 16 (default 2)
  --port N           the port nginx listens on (default 0: a free one)
  --redis-cluster    a Redis Cluster of 3 primaries and 3 replicas instead of one redis-server
                     (kill a primary's process to watch its replica take over)
  -h, --help         this text
  -- <arguments>     more arguments for every replica's backchannel serve (e.g. --auth tokens)
`;

let parsed: ReturnType<typeof parse>;
try {
  parsed = parse();
} catch (error) {
  process.stderr.write(`cluster: ${(error as Error).message}\n\n${USAGE}`);
  process.exit(1);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

function parse() {
  return parseArgs({
    options: {
      replicas: { type: "string", default: "2" },
      port: { type: "string", default: "0" },
      "redis-cluster": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: true,
    strict: true,
  });
}
const replicas = Number(values.replicas);
const port = Number(values.port);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 16) {
  process.stderr.write(`cluster: --replicas takes a number from 1 to 16, not ${JSON.stringify(values.replicas)}\n`);
  process.exit(1);
}
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`cluster: --port takes a port number (0 picks a free one), not ${JSON.stringify(values.port)}\n`);
  process.exit(1);
}

let cluster: Awaited<ReturnType<typeof startCluster>>;
try {
  if (values["redis-cluster"]) process.stderr.write("cluster: starting a Redis Cluster of 3 primaries and 3 replicas (a few seconds)\n");
  cluster = await startCluster({ replicas, port, replicaArgs: positionals, redisCluster: values["redis-cluster"] });
} catch (error) {
  process.stderr.write(`cluster: ${(error as Error).message}\n`);
  process.exit(1);
}
process.stdout.write(
  [
    `backchannel cluster: ${cluster.url}`,
    `  MCP endpoint (through nginx): ${cluster.mcpUrl}`,
    `  replicas: ${cluster.replicas.map((replica) => replica.address).join(", ")}; Redis: ${cluster.redisUrl}`,
    ...(cluster.redisCluster
      ? [
          `  Redis Cluster nodes (3 primaries, 3 replicas): ${cluster.redisCluster.nodes.map((node) => `${node.port} (pid ${node.process().child.pid})`).join(", ")}`,
        ]
      : []),
    `  nginx's access log (which replica served each request): ${cluster.dir}/access.log`,
    "  Ctrl-C stops everything.",
    "",
  ].join("\n"),
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  process.stderr.write("cluster: stopping\n");
  cluster.stop().then(
    () => process.exit(0),
    (error: Error) => {
      process.stderr.write(`cluster: ${error.message}\n`);
      process.exit(1);
    },
  );
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
for (const running of [...cluster.redis, cluster.nginx, ...cluster.replicas.map((replica) => replica.process)]) {
  running.child.once("exit", (code, signal) => {
    if (stopping) return;
    // A Redis Cluster's node may go: its replica takes over, and the rest serve on.
    if (cluster.redisCluster && cluster.redis.includes(running)) {
      process.stderr.write(`cluster: ${running.name} exited (${code ?? signal}); the Redis Cluster promotes its replica if it was a primary\n`);
      return;
    }
    process.stderr.write(`cluster: ${running.name} exited (${code ?? signal}); stopping the rest\n${running.output().trim()}\n`);
    stop();
  });
}
