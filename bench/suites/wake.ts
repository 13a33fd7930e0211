/**
 * Figures 1 and 8: how fast the agent's watcher wakes, and how fast it starts.
 *
 * Two server processes play the app and the agent. The app calls `notify_agent`; the
 * time is taken when that call returns, and again when the watcher's exit (exit mode)
 * or its line for that message (`--follow`) is seen.
 * - Exit mode: each sample spawns a new watcher (its spawn → armed time is figure 8),
 *   waits a random moment within the watcher's timer period, sends, and sees it exit;
 *   the agent then drains the queue, which checks that exactly that message arrived.
 * - Follow mode: one watcher sees a stream of messages sent at random moments (see
 *   ../stream.ts); the agent drains at the end, as a drain in between would hide
 *   messages from a watcher that only reads every 500 ms.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { Design, DesignName } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import { assertExactlyOnce } from "../integrity.js";
import { startServer, type ServerProcess } from "../procs/server.js";
import { spawnWatcher, type WatcherProcess } from "../procs/watcher.js";
import { streamLatencies, type Arrivals } from "../stream.js";
import { pauseWithinPeriod, withTimeout } from "../timing.js";
import type { QueueMessage } from "../../protocol/message.js";

/** How many samples of each kind to take. */
export interface WakeCounts {
  exit: number;
  follow: number;
}

/** The samples of one design. */
interface WakeSamples {
  exit: number[];
  exitFromCall: number[];
  follow: number[];
  followFromCall: number[];
  coldStart: number[];
  /** Exit mode: from the watcher's line being read to its exit being seen (process teardown). */
  lineToExit: number[];
}

const CHANNEL = "bench-wake";
/** Longest a single wake may take before the run fails (the baseline needs 500 ms). */
const WAKE_TIMEOUT_MS = 10_000;

/** Measures each design with `counts(design)` samples. */
export async function wakeFigures(designs: readonly Design[], counts: (design: Design) => WakeCounts, ctx: RunContext): Promise<Figure[]> {
  const results = {} as Record<DesignName, WakeSamples>;
  for (const design of designs) {
    ctx.log(`wake: ${design.name}`);
    results[design.name] = await measure(design, counts(design), ctx);
  }
  const pick = (kind: keyof WakeSamples) =>
    Object.fromEntries(designs.map((design) => [design.name, results[design.name][kind]])) as Record<DesignName, number[]>;
  return [
    { key: "wake.exit", name: "wake: notify_agent returns → watcher exit", unit: "ms", better: "lower", samples: pick("exit") },
    { key: "wake.exit.teardown", name: "wake: watcher's line read → its exit seen", unit: "ms", better: "lower", samples: pick("lineToExit") },
    { key: "wake.exit.fromCall", name: "wake: notify_agent called → watcher exit", unit: "ms", better: "lower", samples: pick("exitFromCall") },
    { key: "wake.follow", name: "wake: notify_agent returns → --follow line", unit: "ms", better: "lower", samples: pick("follow") },
    { key: "wake.follow.fromCall", name: "wake: notify_agent called → --follow line", unit: "ms", better: "lower", samples: pick("followFromCall") },
    { key: "watcher.coldStart", name: "watcher cold start: spawn → armed", unit: "ms", better: "lower", samples: pick("coldStart") },
  ];
}

async function measure(design: Design, counts: WakeCounts, ctx: RunContext): Promise<WakeSamples> {
  const dataDir = await mkdtemp(join(ctx.root, `${design.name}-wake-`));
  const app = await startServer(design, dataDir);
  const agent = await startServer(design, dataDir);
  const samples: WakeSamples = { exit: [], exitFromCall: [], follow: [], followFromCall: [], coldStart: [], lineToExit: [] };
  try {
    // Creates the channel folder, so that every watcher starts on an existing channel.
    await drain(agent, []);
    // One unrecorded round first: the servers' first calls pay for compiling their code.
    for (let i = -1; i < counts.exit; i += 1) {
      const watcher = spawnWatcher(design, dataDir, CHANNEL, false);
      try {
        const readyAt = await withTimeout(watcher.ready, WAKE_TIMEOUT_MS, `${design.name} watcher to arm`);
        await pauseWithinPeriod(design.timerPeriodMs.watcher);
        const calledAt = performance.now();
        const seq = await send(app, i);
        const returnedAt = performance.now();
        const { code, at } = await withTimeout(watcher.exited, WAKE_TIMEOUT_MS, `${design.name} watcher to exit`);
        if (code !== 0) throw new Error(`${design.name} watcher exited with ${code}, not 0`);
        const line = await watcher.nextLine(WAKE_TIMEOUT_MS);
        await drain(agent, [seq]);
        if (i < 0) continue;
        samples.lineToExit.push(at - line.at);
        samples.coldStart.push(readyAt - watcher.spawnedAt);
        samples.exit.push(at - returnedAt);
        samples.exitFromCall.push(at - calledAt);
      } finally {
        watcher.stop();
      }
    }
    const follower = spawnWatcher(design, dataDir, CHANNEL, true);
    try {
      await withTimeout(follower.ready, WAKE_TIMEOUT_MS, `${design.name} follow watcher to arm`);
      const sent: number[] = [];
      const sendAndRemember = async (index: number) => {
        const seq = await send(app, index);
        sent.push(seq);
        return seq;
      };
      const latencies = await streamLatencies(`${design.name} --follow`, counts.follow, sendAndRemember, followArrivals(follower), WAKE_TIMEOUT_MS);
      samples.follow = latencies.fromReturn;
      samples.followFromCall = latencies.fromCall;
      await drain(agent, sent);
    } finally {
      follower.stop();
    }
  } finally {
    await Promise.all([app.close(), agent.close()]);
  }
  return samples;
}

/** The arrivals a `--follow` watcher reports: one line per message, "<channel> #<seq> <event>…". */
function followArrivals(watcher: WatcherProcess): Arrivals {
  return {
    async next(timeoutMs) {
      const { line, at } = await watcher.nextLine(timeoutMs);
      const seq = /#(\d+) /.exec(line)?.[1];
      if (seq === undefined) throw new Error(`follow watcher printed a line without a seq: ${JSON.stringify(line)}`);
      return { seq: Number(seq), at };
    },
  };
}

/** The app's `notify_agent`; resolves with the message's seq. */
async function send(app: ServerProcess, index: number): Promise<number> {
  const { seq } = await app.call<{ seq: number }>("notify_agent", { channel_id: CHANNEL, event: "ask", data: { question: `q${index}` } });
  return seq;
}

/**
 * The agent's read-and-clear `poll_agent_messages`.
 * @throws DeliveryError unless it returns exactly the seqs `expected`.
 */
async function drain(agent: ServerProcess, expected: number[]): Promise<void> {
  const { messages } = await agent.call<{ messages: QueueMessage[] }>("poll_agent_messages", { channel_id: CHANNEL });
  assertExactlyOnce(
    "wake",
    expected.map(String),
    messages.map((message) => String(message.seq)),
  );
}
