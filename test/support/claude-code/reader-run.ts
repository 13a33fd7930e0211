/**
 * One whole reader loop under the real Claude Code: a long-lived session whose scripted
 * model follows backchannel's instructions (reader-policy.ts), and an app (an SDK client
 * on the same data directory, simulated-app.ts) that says ready and asks its questions.
 */
import { readdir, readFile } from "node:fs/promises";
import { connectServer, tempDataDir } from "../helpers.js";
import { type AppOutcome, startSimulatedApp } from "../simulated-app.js";
import { describeFigures, type LoopFigures, loopFigures } from "./figures.js";
import { type ModelServer, startModelServer } from "./model-server.js";
import { type ReaderLoop, type ReaderLoopOptions, readerLoopPolicy } from "./reader-policy.js";
import { type ClaudeOptions, type ClaudeSession, startSession } from "./session.js";

/** Options of {@link runReaderLoop}. */
export interface ReaderRunOptions extends ReaderLoopOptions {
  /** The questions the app asks. */
  questions: string[];
  /** More for the session (server arguments, settings, `claude` arguments). */
  claude?: Omit<ClaudeOptions, "model" | "dataDir">;
  /** The app waits at least this long before each question (ms). Default 300. */
  minDelayMs?: number;
  /** … and at most this long. Default 1,200. */
  maxDelayMs?: number;
  /** Give up after this long (ms). Default 90,000. */
  timeoutMs?: number;
  /** Called with the running session once the reader is open, before the app asks (e.g. to watch it idle). */
  whileOpen?: (run: { session: ClaudeSession; model: ModelServer; channelId: string }) => Promise<void>;
}

/** What a run did. */
export interface ReaderRun {
  outcome: AppOutcome;
  loop: ReaderLoop;
  model: ModelServer;
  figures: LoopFigures;
  /** {@link describeFigures} of the figures. */
  summary: string;
  /** The ids of processes still running, started by the session, after it stopped (should be none). */
  leftovers: number[];
}

/**
 * Runs the loop to the last answer, then stops everything.
 * @throws when the reader is not opened, or not every question is answered, within `timeoutMs`;
 *   the message says what the model and the session did.
 */
export async function runReaderLoop(options: ReaderRunOptions): Promise<ReaderRun> {
  const loop = readerLoopPolicy(options);
  const model = await startModelServer(loop.policy);
  const data = await tempDataDir();
  const session = await startSession({ model, dataDir: data.dir, ...options.claude });
  const timeoutMs = options.timeoutMs ?? 90_000;
  let timer: NodeJS.Timeout | undefined;
  const expire = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the loop did not finish within ${timeoutMs} ms: answered ${JSON.stringify(loop.answered)}, ${loop.wakes.length} wakes, ` +
              `${model.turns().length} model requests, policy errors ${JSON.stringify(model.errors.map(String))}; claude stderr: ${session.stderr().slice(-2000)}`,
          ),
        ),
      timeoutMs,
    );
  });
  const app = { client: undefined as Awaited<ReturnType<typeof connectServer>> | undefined };
  try {
    session.send("Open the reader so that I can ask about a text.");
    const { channelId } = await Promise.race([loop.opened, expire]);
    await options.whileOpen?.({ session, model, channelId });
    app.client = await connectServer(data.dir);
    const simulated = startSimulatedApp(app.client, channelId, {
      questions: options.questions,
      minDelayMs: options.minDelayMs ?? 300,
      maxDelayMs: options.maxDelayMs ?? 1_200,
    });
    await Promise.race([simulated.answered, expire]);
    const outcome = await simulated.finish();
    const figures = loopFigures(outcome, model);
    const pid = session.child.pid!;
    await app.client.close();
    await session.stop();
    const leftovers = await stillRunning(pid, data.dir);
    return { outcome, loop, model, figures, summary: describeFigures(figures), leftovers };
  } finally {
    clearTimeout(timer);
    await app.client?.close();
    await session.stop();
    await model.close();
    await data.cleanup();
  }
}

/** Processes still running that belong to the stopped session: its process group, or with `dataDir` in their command line or environment. */
async function stillRunning(pid: number, dataDir: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    const group = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    if (group === pid || cmdline.includes(dataDir) || environ.includes(`BACKCHANNEL_HOME=${dataDir}`)) found.push(Number(name));
  }
  return found;
}
