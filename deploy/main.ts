#!/usr/bin/env node
/**
 * `npm run cluster`: starts the cluster of ./cluster.ts (redis-server, two
 * `backchannel serve --http` replicas, nginx in front) on this machine, prints its
 * public URL, and stops everything on Ctrl-C.
 *
 *     node dist/deploy/main.js [--replicas N] [--port N] [-- <more serve arguments>]
 *
 * Arguments after `--` go to every replica's `backchannel serve` (e.g. authentication flags).
 */
import { parseArgs } from "node:util";
import { startCluster } from "./cluster.js";

const { values, positionals } = parseArgs({
  options: { replicas: { type: "string", default: "2" }, port: { type: "string", default: "0" } },
  allowPositionals: true,
  strict: true,
});
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
  cluster = await startCluster({ replicas, port, replicaArgs: positionals });
} catch (error) {
  process.stderr.write(`cluster: ${(error as Error).message}\n`);
  process.exit(1);
}
process.stdout.write(
  [
    `backchannel cluster: ${cluster.url}`,
    `  MCP endpoint (through nginx): ${cluster.mcpUrl}`,
    `  replicas: ${cluster.replicas.map((replica) => replica.address).join(", ")}; Redis: ${cluster.redisUrl}`,
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
for (const running of [cluster.redis, cluster.nginx, ...cluster.replicas.map((replica) => replica.process)]) {
  running.child.once("exit", (code, signal) => {
    if (stopping) return;
    process.stderr.write(`cluster: ${running.name} exited (${code ?? signal}); stopping the rest\n${running.output().trim()}\n`);
    stop();
  });
}
