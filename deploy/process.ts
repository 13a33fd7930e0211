/**
 * A program the cluster runs (redis-server, a `backchannel serve --http` replica,
 * nginx), started and waited for until it says it is ready, its output kept for the
 * error that explains a failed start.
 */
import { type ChildProcess, spawn } from "node:child_process";

/** A running program. */
export interface RunningProcess {
  /** What it is, for messages ("replica 1", "nginx"). */
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything it printed on stdout and stderr so far. */
  output(): string;
  /** Whether it has ended. */
  ended(): boolean;
  /** Sends `signal` (default SIGTERM) and resolves once it has ended. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Options of {@link startProcess}. */
export interface StartOptions {
  /** What it is, for messages. */
  name: string;
  program: string;
  args: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Ready once its output matches this; the match is returned. */
  ready: RegExp;
  /** Give up after this long. Default 30,000 ms. */
  timeoutMs?: number;
}

/**
 * Starts a program and resolves once its output matches `options.ready`.
 * @returns the process and the match.
 * @throws Error, with the program's output, when it ends or times out before it is ready
 *   (and then it is killed), or cannot be started (e.g. not installed).
 */
export async function startProcess(options: StartOptions): Promise<{ process: RunningProcess; match: RegExpMatchArray }> {
  const { name, program, args, env = {}, ready, timeoutMs = 30_000 } = options;
  const child = spawn(program, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let ended = false;
  const exited = new Promise<void>((resolve) =>
    child.once("close", () => {
      ended = true;
      resolve();
    }),
  );
  const running: RunningProcess = {
    name,
    child,
    output: () => output,
    ended: () => ended,
    async stop(signal = "SIGTERM") {
      if (!ended) child.kill(signal);
      await exited;
    },
  };
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const onError = (error: Error) => fail(`could not start (${error.message})`);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited (${code ?? signal}) before it was ready`);
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      child.off("error", onError);
      child.off("exit", onExit);
    };
    const fail = (reason: string) => {
      settle();
      child.kill("SIGKILL");
      reject(new Error(`${name} (${program}) ${reason}:\n${output.trim()}`));
    };
    const timer = setTimeout(() => fail(`was not ready after ${timeoutMs / 1000} s`), timeoutMs);
    const onOutput = (chunk: Buffer) => {
      output += chunk.toString();
      const found = settled ? null : output.match(ready);
      if (found) {
        settle();
        resolve(found);
      }
    };
    // Read both pipes for the whole life of the process, so that a full pipe never stops it.
    child.stdout!.on("data", onOutput);
    child.stderr!.on("data", onOutput);
    child.once("error", onError);
    child.once("exit", onExit);
  });
  return { process: running, match };
}
