/**
 * Running the status line command that backchannel's replaced (Claude Code has one
 * status line; a tool that wants a segment must wrap the existing command).
 */
import { spawn } from "node:child_process";

/** How long the wrapped command may take before what it printed so far is used. */
const WRAP_TIMEOUT_MS = 2000;

/**
 * Runs `command` through the shell (`/bin/sh -c`, or `cmd` on Windows, as Claude Code
 * runs a status line) with `input` on its stdin, and resolves to its stdout. Its stderr
 * is dropped (the host does not show a status line's stderr, and a leftover grandchild
 * holding the host's pipe would keep the host waiting); its exit status is ignored. After `timeoutMs` the command is killed and
 * what it printed so far is the result. Never rejects: a command that cannot start
 * resolves to `""`.
 */
export function runWrapped(command: string, input: string, timeoutMs: number = WRAP_TIMEOUT_MS): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ["pipe", "pipe", "ignore"], windowsHide: true });
    let out = "";
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // A grandchild of a killed shell may still hold the pipe: stop reading rather than wait for it.
      child.stdout.destroy();
      resolve(out);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish();
    }, timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    // EPIPE when the command exits without reading its input: harmless.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
    child.once("error", finish);
    child.once("close", finish);
  });
}
