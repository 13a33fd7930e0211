/**
 * `backchannel serve --http` as a process, for the tests of remote serving: started on a
 * free port, resolved once it prints its URL, and ended by {@link stopHttpServers}
 * (each suite calls it in its `after`).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, tempDataDir } from "./helpers.js";

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

/** A `serve --http --auth tokens` on a data directory of its own, and a token of each principal named. */
export interface ServedWithTokens<Principal extends string> extends Served {
  /** The data directory. */
  dir: string;
  /** Each principal's token, by name. */
  tokens: Record<Principal, string>;
  /** Removes the data directory (stop the server first, or leave it to {@link stopHttpServers}). */
  cleanup(): Promise<void>;
}

/** Starts `serve --http --auth tokens` on a fresh data directory, with a token for each of `principals` and `env` beside the test's own. */
export async function serveWithTokens<Principal extends string>(
  principals: readonly Principal[],
  env: Record<string, string> = {},
): Promise<ServedWithTokens<Principal>> {
  const { dir, cleanup } = await tempDataDir();
  const file = join(dir, "tokens.json");
  const tokens = Object.fromEntries(principals.map((principal) => [principal, addToken(file, principal)])) as Record<Principal, string>;
  const served = await serveHttp(["--auth", "tokens", "--tokens", file], { BACKCHANNEL_HOME: dir, ...env });
  return { ...served, dir, tokens, cleanup };
}

/** The resident memory of process `pid`, in MiB. */
export function rssMiB(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kib / 1024);
}
