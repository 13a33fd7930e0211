/**
 * `backchannel serve --http` as a process, for the tests of remote serving: started on a
 * free port, resolved once it prints its URL, and ended by {@link stopHttpServers}
 * (each suite calls it in its `after`).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { CLI } from "./helpers.js";

/** A running `serve --http` and what it printed. */
export interface Served {
  process: ChildProcess;
  /** The MCP endpoint it listens on. */
  url: URL;
  stderr(): string;
}

const running = new Set<ChildProcess>();

/**
 * Starts `backchannel serve --http --port 0 ...args` with `env` beside the test's own.
 * @returns the process, once it printed its URL.
 * @throws when it exits first, with what it printed.
 */
export function serveHttp(args: string[], env: Record<string, string>): Promise<Served> {
  const child = spawn(process.execPath, [CLI, "serve", "--http", "--port", "0", ...args], {
    env: { ...(process.env as Record<string, string>), ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /MCP server at (http:\/\/[^\s,]+)/.exec(stderr);
      if (match) resolve({ process: child, url: new URL(match[1]!), stderr: () => stderr });
    });
    child.once("exit", (code) => reject(new Error(`serve ${args.join(" ")} exited (${code}): ${stderr}`)));
  });
}

/** Ends every server {@link serveHttp} started that still runs. */
export function stopHttpServers(): void {
  for (const child of running) child.kill();
}

/** A new token for `principal` in the token file at `tokens` (`backchannel token add`). */
export function addToken(tokens: string, principal: string): string {
  const run = spawnSync(process.execPath, [CLI, "token", "add", principal, "--tokens", tokens], { encoding: "utf8", timeout: 20_000 });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim().split(/\s+/).at(-1)!;
}
