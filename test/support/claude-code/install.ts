/**
 * Where the real Claude Code CLI is: installed for these tests only by
 * `npm run claude-code:install` (test/support/claude-code/cli/), into a cache folder
 * outside the project's node_modules. The tests run the platform package's native
 * `claude` binary directly (npm leaves the launcher stub unlinked).
 *
 * Where it is missing the Claude Code tests are skipped loudly; in CI (`$CI` set) they
 * fail instead.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { hostSkipReason } from "../host-install.js";

/** The Claude Code version the tests pin (test/support/claude-code/cli/package-lock.json). */
export const CLAUDE_CODE_VERSION = "2.1.328";

/** The install folder: `$BACKCHANNEL_CLAUDE_CODE_DIR`, default `${XDG_CACHE_HOME:-~/.cache}/backchannel/claude-code`. */
export function claudeCodeDir(): string {
  return process.env.BACKCHANNEL_CLAUDE_CODE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "backchannel", "claude-code");
}

/** The native `claude` binary of this platform's package in {@link claudeCodeDir}. */
export function claudeBinary(): string {
  return join(claudeCodeDir(), "node_modules", "@anthropic-ai", `claude-code-${process.platform}-${process.arch}`, "claude");
}

/**
 * Why the Claude Code tests cannot run here, or `undefined` when the pinned version is installed.
 * @throws Error when `$CI` is set and it is missing: in CI the Claude Code tests must run.
 */
export const claudeCodeSkipReason = hostSkipReason("Claude Code", () => {
  const binary = claudeBinary();
  if (!existsSync(binary)) return `Claude Code is not installed at ${binary} (run npm run claude-code:install)`;
  const version = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000, env: { ...process.env, DISABLE_AUTOUPDATER: "1" } });
  if (!version.stdout?.startsWith(CLAUDE_CODE_VERSION))
    return `${binary} --version says ${JSON.stringify((version.stdout || version.stderr || String(version.error)).trim())}, not ${CLAUDE_CODE_VERSION} (run npm run claude-code:install)`;
  return undefined;
});
