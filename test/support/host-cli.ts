/**
 * Where the real agent hosts are, and whether their tests can run. Each is installed for
 * its tests only, exact-pinned, into a cache folder outside the project's node_modules:
 * Claude Code by `npm run claude-code:install` (claude-code/install.ts), Codex CLI and
 * Gemini CLI by `npm run hosts:install` (host-install.sh). Without a host, its tests are
 * skipped loudly; in CI (`$CI` set) they fail instead.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The cache folder a host is installed into: `override` when given, else
 * `${XDG_CACHE_HOME:-~/.cache}/backchannel/<name>`.
 */
export function hostCacheDir(name: string, override?: string): string {
  return override || join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "backchannel", name);
}

/** Where `npm run hosts:install` put `name` (codex, gemini): `$BACKCHANNEL_HOSTS_DIR/<name>` when set, as host-install.sh. */
export function pinnedHostDir(name: string): string {
  return hostCacheDir(name, process.env.BACKCHANNEL_HOSTS_DIR && join(process.env.BACKCHANNEL_HOSTS_DIR, name));
}

/** A pinned host, as {@link hostSkipReason} checks it. */
export interface PinnedHost {
  /** Its name in messages, e.g. "Codex CLI". */
  name: string;
  /** The command that runs it (a binary, or node and a script). */
  command: string[];
  /** The version its `--version` must start with (or contain, after a prefix such as `codex-cli `). */
  version: string;
  /** The command that installs it, for the message. */
  install: string;
  /** More environment for `--version`. */
  env?: Record<string, string>;
}

const answers = new Map<string, { reason: string | undefined }>();

/**
 * Why the tests of `host` cannot run here, or `undefined` when the pinned version is
 * installed. Found once per host and process; a skip is announced on stderr.
 * @throws Error when `$CI` is set and it is missing: in CI the host's tests must run.
 */
export function hostSkipReason(host: PinnedHost): string | undefined {
  let answer = answers.get(host.name);
  if (!answer) {
    answer = { reason: findSkipReason(host) };
    answers.set(host.name, answer);
  }
  return answer.reason;
}

function findSkipReason(host: PinnedHost): string | undefined {
  const [program, ...args] = host.command;
  let reason: string | undefined;
  if (!program || !existsSync(program)) reason = `${host.name} is not installed at ${program} (run ${host.install})`;
  else {
    const found = spawnSync(program, [...args, "--version"], { encoding: "utf8", timeout: 30_000, env: { ...process.env, ...host.env } });
    const said = (found.stdout || found.stderr || String(found.error)).trim();
    if (!said.split(/\s+/).some((word) => word.startsWith(host.version)))
      reason = `${program} --version says ${JSON.stringify(said.slice(0, 200))}, not ${host.version} (run ${host.install})`;
  }
  if (reason === undefined) return undefined;
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the ${host.name} tests must run`);
  process.stderr.write(`\n*** SKIPPING the ${host.name} tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
  return reason;
}
