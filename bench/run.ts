/**
 * `npm run bench`: measures backchannel and the polling baseline in the same run,
 * prints a markdown table, and writes every raw sample to bench/results/latest.json.
 *
 *     node dist/bench/run.js [--full] [--out FILE] [--only SUITE,…] [--no-redis] [--reader-before COMMIT|none] [--before COMMIT,…]
 *
 * `--help` prints what each option does ({@link USAGE}).
 *
 * Suites: context, wake, delivery, throughput, idle, scale, awareness, inspector, reader,
 * cluster, claude-code, browser-tab, mcp-use, flood, agent-hosts, before, redis-cluster (all
 * by default; claude-code needs `npm run claude-code:install`, mcp-use `npm run mcp-use:install`,
 * agent-hosts (Codex CLI and Gemini CLI) `npm run hosts:install`). Wake, delivery (with the round trip), throughput and idle also
 * measure backchannel on the Redis store, beside the file store, on a redis-server this
 * run starts (appendonly yes, appendfsync always: durable as the file store); `--no-redis`,
 * or no redis-server installed, leaves it out. Figures of backchannel alone (awareness:
 * the baseline has no status line and no push; inspector: the reader in a real MCP Apps
 * host; reader: a 1 MiB document against an earlier reader in the playground, then a
 * 718 KB one in Inspector; the redis-server's own idle
 * cost) get a second table, and go to the JSON as `solo`.
 * The run fails (exit 1) when any message was lost or duplicated, whatever else it
 * measured.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Design, DESIGNS, BACKCHANNEL, BASELINE, redisDesign } from "./designs.js";
import type { Figure, RunContext } from "./figures.js";
import { describeMachine } from "./machine.js";
import { FULL, QUICK, type Plan } from "./plan.js";
import { analyse, renderTable, writeResult, type RunResult } from "./report.js";
import { analyseSolo, renderSoloTable, type SoloFigure, type SoloResult } from "./solo.js";
import { agentHostsFigures } from "./suites/agent-hosts.js";
import { awarenessFigures } from "./suites/awareness.js";
import { browserTabFigures } from "./suites/browser-tab.js";
import { beforeFigures } from "./suites/before.js";
import { claudeCodeFigures } from "./suites/claude-code.js";
import { clusterFigures } from "./suites/cluster.js";
import { contextFigures } from "./suites/context.js";
import { deliveryFigures } from "./suites/delivery.js";
import { idleFigures } from "./suites/idle.js";
import { inspectorFigures } from "./suites/inspector.js";
import { floodFigures } from "./suites/flood.js";
import { inspectorLongFigures } from "./suites/inspector-long.js";
import { mcpUseFigures } from "./suites/mcp-use.js";
import { readerLongFigures } from "./suites/reader-long.js";
import { redisClusterFigures } from "./suites/redis-cluster.js";
import { scaleFigures } from "./suites/scale.js";
import { throughputFigures } from "./suites/throughput.js";
import { wakeFigures } from "./suites/wake.js";
import { REDIS_SERVER, type RedisServer, startRedis, TEST_DATABASES } from "../test/support/redis-server.js";

/**
 * The suites, in the order they run. `stores` is backchannel on each of its stores and
 * the baseline; the other suites compare backchannel on its file store with the baseline.
 */
const SUITES: Record<string, (plan: Plan, ctx: RunContext, stores: readonly Design[]) => Promise<(Figure | SoloFigure)[]>> = {
  context: (_plan, ctx) => contextFigures(DESIGNS, ctx),
  wake: (plan, ctx, stores) => wakeFigures(stores, plan.wake, ctx),
  delivery: (plan, ctx, stores) => deliveryFigures(stores, plan.delivery, ctx),
  throughput: (plan, ctx, stores) => throughputFigures(stores, plan.throughput, ctx),
  idle: (plan, ctx, stores) => idleFigures(stores, plan.idle, ctx),
  scale: (plan, ctx) => scaleFigures(DESIGNS, plan.scale, ctx),
  awareness: (plan, ctx) => awarenessFigures(plan.awareness, ctx),
  inspector: (plan, ctx) => inspectorFigures(plan.inspector, ctx),
  // The long document in the playground, then in Inspector: both hosts' figures in one run.
  reader: async (plan, ctx) => [...(await readerLongFigures(plan.readerLong, ctx)), ...(await inspectorLongFigures(plan.inspectorLong, ctx))],
  cluster: (plan, ctx) => clusterFigures(plan, ctx),
  "claude-code": (plan, ctx) => claudeCodeFigures(plan.claudeCode, ctx),
  "browser-tab": (plan, ctx) => browserTabFigures(plan.browserTab, ctx),
  "mcp-use": (plan, ctx) => mcpUseFigures(plan.mcpUse, ctx),
  flood: (plan, ctx) => floodFigures(plan.flood, ctx),
  "agent-hosts": (plan, ctx) => agentHostsFigures(plan.agentHosts, ctx),
  before: (plan, ctx) => beforeFigures(plan.before, ctx),
  "redis-cluster": (plan, ctx) => redisClusterFigures(plan, ctx),
};

/** The suites that measure the Redis store too. */
const STORE_SUITES = ["wake", "delivery", "throughput", "idle"];

/** What `--help` prints. */
const USAGE = `Usage: npm run bench -- [options]

  --full                  about 45 minutes: p99 from 100+ samples, idle cost over 10 minutes
                          (default: the quick mode, about 2½ minutes plus the browser suites)
  --out FILE              where the raw samples go (default bench/results/latest.json)
  --only SUITE,…          only these suites: ${Object.keys(SUITES).join(", ")}
  --no-redis              leave the Redis store out of the store suites
  --before COMMIT,…       the before suite: this checkout's server against each commit's, built
                          from git archive, on the file store (without it the suite measures nothing)
  --reader-before COMMIT  the commit whose reader the reader suite measures too, as "before"
                          (default ${QUICK.readerLong.beforeCommit}); "none" measures this checkout's reader only:
                          a minute or two instead of several
  -h, --help              this text
`;

/** bench/results/latest.json in the source tree (this file runs from dist/bench/). */
const DEFAULT_OUT = fileURLToPath(new URL("../../bench/results/latest.json", import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      full: { type: "boolean" },
      out: { type: "string" },
      only: { type: "string" },
      "no-redis": { type: "boolean" },
      "reader-before": { type: "string" },
      before: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const only = values.only?.split(",") ?? Object.keys(SUITES);
  const unknown = only.filter((name) => !(name in SUITES));
  if (unknown.length > 0) throw new Error(`unknown suite ${unknown.join(", ")}; choose from ${Object.keys(SUITES).join(", ")}`);
  const mode = values.full ? "full" : "quick";
  const modePlan = mode === "full" ? FULL : QUICK;
  const readerBefore = values["reader-before"];
  // Handed to `git archive` as one argument each: anything but an option is a revision for git to judge.
  const commits = values.before?.split(",") ?? [];
  const bad = [readerBefore, ...commits].find((commit) => commit !== undefined && (commit === "" || commit.startsWith("-")));
  if (bad !== undefined) throw new Error(`--before and --reader-before take commits (e.g. 0c4312a, a tag or a branch), not "${bad}"`);
  const plan: Plan = {
    ...modePlan,
    before: { ...modePlan.before, commits },
    ...(readerBefore !== undefined && { readerLong: { ...modePlan.readerLong, beforeCommit: readerBefore === "none" ? null : readerBefore } }),
  };
  const root = await mkdtemp(join(tmpdir(), "backchannel-bench-"));
  const startedAt = new Date();
  const started = performance.now();
  const loadBefore = loadavg()[0]!;
  // Taken now: the tree may change while a long run goes on.
  const commit = describeCommit();
  const ctx: RunContext = {
    mode,
    root,
    log: (line) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`),
  };
  const figures: (Figure | SoloFigure)[] = [];
  const redis = !values["no-redis"] && only.some((name) => STORE_SUITES.includes(name)) ? await startRedisForBench(ctx) : undefined;
  const stores = redis
    ? [BACKCHANNEL, redisDesign(redis.server.url, TEST_DATABASES, { pid: redis.server.child().pid, port: redis.server.port }), BASELINE]
    : DESIGNS;
  try {
    for (const [name, suite] of Object.entries(SUITES)) {
      if (only.includes(name)) figures.push(...(await suite(plan, ctx, stores)));
    }
  } finally {
    await redis?.server.stop();
    await rm(root, { recursive: true, force: true });
  }
  const result: RunResult = {
    mode,
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 1000),
    commit,
    machine: describeMachine(tmpdir()),
    loadAverage: { before: loadBefore, after: loadavg()[0]! },
    ...(redis && { redis: redis.description }),
    figures: analyse(figures.filter((figure): figure is Figure => !("solo" in figure))),
  };
  const solo = analyseSolo(figures.filter((figure): figure is SoloFigure => "solo" in figure));
  const record: RunResult & { solo: SoloResult[] } = { ...result, solo };
  const out = values.out ?? DEFAULT_OUT;
  await writeResult(out, record);
  const tables = [
    // Left out when empty (`--only awareness`): the solo table has its own heading.
    ...(result.figures.length > 0 || solo.length === 0 ? [renderTable(result)] : []),
    ...(solo.length > 0 ? [renderSoloTable(result, solo)] : []),
  ];
  process.stdout.write(`${tables.join("\n\n")}\n\nRaw samples: ${out} (${result.durationSeconds} s)\n`);
}

/**
 * A redis-server for the Redis store's figures, durable as the file store is (every
 * acknowledged write on disk), in the run's temporary folder; `undefined` with a note
 * when redis-server is not installed.
 */
async function startRedisForBench(ctx: RunContext): Promise<{ server: RedisServer; description: string } | undefined> {
  const version = spawnSync(REDIS_SERVER, ["--version"], { encoding: "utf8" });
  if (version.status !== 0) {
    ctx.log("redis-server is not installed: the Redis store is left out (apt-get install redis-server)");
    return undefined;
  }
  const server = await startRedis({ appendonly: "yes", appendfsync: "always" });
  const release = /v=(\S+)/.exec(version.stdout)?.[1] ?? "unknown";
  return { server, description: `redis-server ${release} on loopback, appendonly yes, appendfsync always, data in ${server.dir}` };
}

/** The commit measured, e.g. "5c44dd1+dirty"; "unknown" outside a git checkout. */
function describeCommit(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") ? "+dirty" : ""}`;
  } catch {
    return "unknown";
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench failed: ${error.stack ?? error.message}\n`);
  process.exitCode = 1;
});
