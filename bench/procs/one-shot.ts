/**
 * A short-lived command run to its end and timed as a host that runs it sees it: from
 * just before `spawn` (which costs the parent its fork and exec) to the child's `exit`.
 */
import { spawn } from "node:child_process";

/** What one run did. */
export interface OneShot {
  /** Spawn → exit, in ms of this process's `performance.now()`. */
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node …args` with `env`, writes `input` to its stdin and closes it; resolves once
 * the process has exited and its output is read.
 */
export function runNode(args: string[], env: NodeJS.ProcessEnv, input: string): Promise<OneShot> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  let exitedAt = NaN;
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  // A command that never reads stdin (node -e 0) may exit before the write lands: EPIPE is no failure.
  child.stdin.on("error", () => undefined);
  child.stdin.end(input);
  child.on("exit", () => (exitedAt = performance.now()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ ms: exitedAt - started, code, stdout, stderr }));
  });
}
