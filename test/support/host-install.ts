/**
 * The rule for agent hosts installed for their tests only: each is exact-pinned by a
 * package-lock.json of its own and installed into a cache folder outside the project's
 * node_modules by one command that `.ci/run` runs (Claude Code: `npm run
 * claude-code:install`; Codex CLI and Gemini CLI: `npm run hosts:install`, which runs
 * host-install.sh; mcp-use's inspector: `npm run mcp-use:install`). Where one is
 * missing, its tests are skipped loudly; in CI (`$CI` set) they fail instead.
 *
 * Each host's module says where its host is and which version it pins
 * (claude-code/install.ts, codex/session.ts, gemini/session.ts, mcp-use/install.ts).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * A function that says, once, why `host`'s tests cannot run here: `find()`'s reason, or
 * `undefined` when the pinned version is installed. A reason is printed to stderr.
 * @throws Error (from the returned function) when `$CI` is set and `find()` gave a reason.
 */
export function hostSkipReason(host: string, find: () => string | undefined): () => string | undefined {
  let found: { reason: string | undefined } | undefined;
  return () => {
    if (found === undefined) {
      const reason = find();
      found = { reason };
      if (reason !== undefined && !process.env.CI)
        process.stderr.write(`\n*** SKIPPING the ${host} tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
    }
    if (found.reason !== undefined && process.env.CI) throw new Error(`${found.reason}; CI is set, so the ${host} tests must run`);
    return found.reason;
  };
}

/**
 * The cache folder a host is installed into: `override` when given (an environment
 * variable's value; empty counts as unset), else `${XDG_CACHE_HOME:-~/.cache}/backchannel/<name>`.
 */
export function hostCacheDir(name: string, override?: string): string {
  return override || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "backchannel", name);
}

/** Where `npm run hosts:install` put `name` (codex, gemini): `$BACKCHANNEL_HOSTS_DIR/<name>` when set, as host-install.sh. */
export function pinnedHostDir(name: string): string {
  return hostCacheDir(name, process.env.BACKCHANNEL_HOSTS_DIR && join(process.env.BACKCHANNEL_HOSTS_DIR, name));
}

/** A pinned program, as {@link versionProblem} checks it. */
export interface PinnedCommand {
  /** Its name in messages, e.g. "Codex CLI". */
  name: string;
  /** The command that runs it (a binary, or node and a script). */
  command: string[];
  /** The version a word of its `--version` must start with (`codex-cli 0.171.0`, `v22.23.5`). */
  version: string;
  /** The command that installs it, for the message. */
  install: string;
  /** More environment for `--version`. */
  env?: Record<string, string>;
}

/** Why `pinned` is missing or another version (a message that says what to run), or `undefined` when it is there. */
export function versionProblem(pinned: PinnedCommand): string | undefined {
  const [program, ...args] = pinned.command;
  if (!program || !existsSync(program)) return `${pinned.name} is not installed at ${program} (run ${pinned.install})`;
  const found = spawnSync(program, [...args, "--version"], { encoding: "utf8", timeout: 30_000, env: { ...process.env, ...pinned.env } });
  const said = (found.stdout || found.stderr || String(found.error)).trim();
  if (said.split(/\s+/).some((word) => word.startsWith(pinned.version))) return undefined;
  return `${program} --version says ${JSON.stringify(said.slice(0, 200))}, not ${pinned.version} (run ${pinned.install})`;
}
