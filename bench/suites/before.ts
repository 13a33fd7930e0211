/**
 * This checkout's server and watcher against those of earlier commits (`--before
 * COMMIT,…`), on the file store: what a person feels of a change below the tools. Each
 * commit is built from `git archive` into a temporary folder with this checkout's
 * node_modules; every build gets its own data directory and two server processes (the
 * app's and the agent's), and the builds are measured in turns, a few round trips each
 * (./delivery.ts `measureRoundTrips`, on a channel of the turn's own), in an order
 * shuffled every turn, so that the machine's load falls on all alike:
 *
 * - ask → answer: the app's ask sent → the agent's watcher woken → its read → its answer
 *   at the app's long-poll;
 * - send: the app's `notify_agent` called → answered (the reader's send).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BACKCHANNEL, type Design } from "../designs.js";
import type { RunContext } from "../figures.js";
import { startServer } from "../procs/server.js";
import type { SoloFigure } from "../solo.js";
import { measureRoundTrips } from "./delivery.js";

/** What to measure. */
export interface BeforePlan {
  /** The earlier commits; none: the suite measures nothing. */
  commits: string[];
  /** Turns, each a few round trips of every build. */
  turns: number;
  /** Round trips per build and turn (after one unrecorded). */
  perTurn: number;
}

/** The repository this benchmark runs from (dist/bench/suites/ → the root). */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Measures this checkout against each commit of `plan`. */
export async function beforeFigures(plan: BeforePlan, ctx: RunContext): Promise<SoloFigure[]> {
  if (plan.commits.length === 0) {
    ctx.log("before: no earlier commit asked for (--before COMMIT,…); nothing to measure");
    return [];
  }
  const builds: { name: string; design: Design }[] = [{ name: "this checkout", design: BACKCHANNEL }];
  for (const commit of plan.commits) {
    ctx.log(`before: building the server of ${commit}`);
    const cli = await buildCliAt(commit, await mkdtemp(join(ctx.root, "before-build-")));
    builds.push({ name: `the server of ${commit}`, design: designOf(cli) });
  }
  const samples = builds.map(() => ({ roundTrip: [] as number[], send: [] as number[] }));
  const running = await Promise.all(
    builds.map(async ({ design }) => {
      const dataDir = await mkdtemp(join(ctx.root, "before-data-"));
      const [app, agent] = await Promise.all([startServer(design, dataDir), startServer(design, dataDir)]);
      return { dataDir, app, agent };
    }),
  );
  try {
    for (let turn = 0; turn < plan.turns; turn += 1) {
      const order = builds.map((_, index) => index).sort(() => Math.random() - 0.5);
      for (const index of order) {
        ctx.log(`before: turn ${turn + 1}/${plan.turns}, ${builds[index]!.name}`);
        const { dataDir, app, agent } = running[index]!;
        const measured = await measureRoundTrips(builds[index]!.design, dataDir, app, agent, `before-${turn}`, plan.perTurn);
        samples[index]!.roundTrip.push(...measured.roundTrip);
        samples[index]!.send.push(...measured.send);
      }
    }
  } finally {
    await Promise.all(running.flatMap(({ app, agent }) => [app.close(), agent.close()]));
  }
  const figures: SoloFigure[] = [];
  for (const [index, { name }] of builds.entries()) {
    if (index === 0) continue;
    for (const [key, what] of [
      ["roundTrip", "ask → answer (ask sent → agent woken → answer at the app)"],
      ["send", "send (notify_agent called → answered)"],
    ] as const) {
      figures.push({
        key: `before.${plan.commits[index - 1]}.${key}`,
        name: `file store, this checkout against ${name}: ${what}`,
        unit: "ms",
        solo: true,
        samples: samples[0]![key],
        against: { name, samples: samples[index]![key] },
      });
    }
  }
  return figures;
}

/** The file-store design run by the command line `cli` instead of this checkout's. */
function designOf(cli: string): Design {
  return {
    ...BACKCHANNEL,
    serverArgs: [cli, ...BACKCHANNEL.serverArgs.slice(1)],
    watcherArgs: (channelId, follow) => [cli, ...BACKCHANNEL.watcherArgs(channelId, follow).slice(1)],
  };
}

/**
 * Builds the server of `commit` into `dir` (`git archive`, this checkout's node_modules,
 * its own tsc build) and returns its command line's path.
 * @throws when git or the build fails.
 */
async function buildCliAt(commit: string, dir: string): Promise<string> {
  const archive = execFileSync("git", ["-C", ROOT, "archive", "--format=tar", commit], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "."], { cwd: dir, stdio: "ignore" });
  return join(dir, "dist/cli/main.js");
}
