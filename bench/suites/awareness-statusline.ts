/**
 * Figure 9: the status line's whole process, spawn → exit, as Claude Code runs it
 * every few seconds and after each assistant message (the issue asks for "well under
 * 150 ms"). Two states of one data directory set up with the real store:
 * - silent: a session with no session file, what every Claude Code session that never
 *   opened a reader shows (nothing is printed);
 * - busy: 3 reader channels with 2 asks each, and a wall.
 * Its floor is a bare `node -e 0`, run the same way in the same rounds: each round runs
 * the three once, in a random order, so that a change of load moves all three, and the
 * difference of one round is a paired sample. Every run's output is checked, so that
 * the figure is the time of a working command.
 *
 * Both run without NODE_EXTRA_CA_CERTS: when it is set, every node process reads and
 * parses that certificate bundle as it starts (about 40 ms for a 220 KB bundle on the
 * VM of bench/README.md), a cost of the machine's setup that would hide what the
 * command itself costs. {@link STRIPPED_ENV} names what was removed.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sessionKeyOfProcess } from "../../core/session-key.js";
import type { RunContext } from "../figures.js";
import { runNode, type OneShot } from "../procs/one-shot.js";
import { FileStore } from "../../store/file/file-store.js";
import { withChannel } from "../../store/session-record.js";

/** The samples, in ms. */
export interface StatuslineSamples {
  silent: number[];
  busy: number[];
  bare: number[];
  /** silent − bare of the same round. */
  silentOverBare: number[];
  /** busy − bare of the same round. */
  busyOverBare: number[];
}

const CLI = fileURLToPath(new URL("../../cli/main.js", import.meta.url));
/** What Claude Code pipes to the status line (a few of its fields). */
const HOST_INPUT = JSON.stringify({ session_id: "bench-session", cwd: "/tmp" });
/** The CLAUDE_PID of the busy session, and of one with no session file. */
const BUSY_PID = "4242";
const SILENT_PID = "4243";
const WALL_TEXT = "Reading chapter 3";
/** What the busy status line must print (the wall's time is local). */
const BUSY_LINE = /^reader: 6 questions · Reading chapter 3 \(until \d\d:\d\d\)\n$/;

/** Variables removed from the children's environment (see the top of this file). */
export const STRIPPED_ENV = ["NODE_EXTRA_CA_CERTS"];

type Kind = "silent" | "busy" | "bare";

/** Runs `rounds` recorded rounds after one unrecorded one (which pays for the first reads of the files and of node itself). */
export async function measureStatusline(rounds: number, ctx: RunContext): Promise<StatuslineSamples> {
  const dataDir = await mkdtemp(join(ctx.root, "statusline-"));
  await fillBusySession(dataDir);
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !STRIPPED_ENV.includes(name)));
  const env = (pid: string): NodeJS.ProcessEnv => ({ ...base, BACKCHANNEL_HOME: dataDir, CLAUDE_PID: pid });
  const commands: Record<Kind, { args: string[]; env: NodeJS.ProcessEnv; expect: RegExp }> = {
    silent: { args: [CLI, "statusline"], env: env(SILENT_PID), expect: /^$/ },
    busy: { args: [CLI, "statusline"], env: env(BUSY_PID), expect: BUSY_LINE },
    // Same environment as the silent status line: only the work differs.
    bare: { args: ["-e", "0"], env: env(SILENT_PID), expect: /^$/ },
  };
  const samples: StatuslineSamples = { silent: [], busy: [], bare: [], silentOverBare: [], busyOverBare: [] };
  for (let round = -1; round < rounds; round += 1) {
    const ms = {} as Record<Kind, number>;
    for (const kind of shuffled<Kind>(["silent", "busy", "bare"])) {
      const { args, env: vars, expect } = commands[kind];
      ms[kind] = checked(kind, await runNode(args, vars, HOST_INPUT), expect).ms;
    }
    if (round < 0) continue;
    samples.silent.push(ms.silent);
    samples.busy.push(ms.busy);
    samples.bare.push(ms.bare);
    samples.silentOverBare.push(ms.silent - ms.bare);
    samples.busyOverBare.push(ms.busy - ms.bare);
  }
  return samples;
}

/** Session claude-<BUSY_PID>: 3 reader channels with 2 asks each, and a wall up for an hour (longer than a full run). */
async function fillBusySession(dataDir: string): Promise<void> {
  const store = new FileStore({ dataDir });
  const key = sessionKeyOfProcess("claude", Number(BUSY_PID));
  for (const id of ["bench-reader-1", "bench-reader-2", "bench-reader-3"]) {
    await store.sessions.update(key, (record) => withChannel(record, { id, app: "reader" }));
    for (let i = 0; i < 2; i += 1) {
      await store.append(id, "agent", "ask", { thread_id: `t${i}`, quote: "truth", question: `Question ${i} on ${id}?`, history: [] });
    }
  }
  const now = Date.now();
  const wall = { text: WALL_TEXT, posted_at: new Date(now).toISOString(), until: new Date(now + 3_600_000).toISOString() };
  await store.sessions.update(key, (record) => ({ ...record, wall }));
}

/**
 * `run`, once it is known to have worked: exit 0, nothing on stderr, stdout matching `expect`.
 * @throws naming `kind` and what it printed otherwise: a broken command must not be timed.
 */
function checked(kind: Kind, run: OneShot, expect: RegExp): OneShot {
  if (run.code !== 0 || run.stderr !== "" || !expect.test(run.stdout)) {
    throw new Error(`${kind} run failed (exit ${run.code}): stdout ${JSON.stringify(run.stdout)}, stderr ${JSON.stringify(run.stderr)}`);
  }
  return run;
}

/** A copy of `items` in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
