/**
 * Where the real Claude Code CLI is: installed for these tests only by
 * `npm run claude-code:install` (test/support/claude-code/cli/), into a cache folder
 * outside the project's node_modules. The tests run the platform package's native
 * `claude` binary directly (npm leaves the launcher stub unlinked).
 *
 * Where it is missing the Claude Code tests are skipped loudly; in CI (`$CI` set) they
 * fail instead.
 */
import { join } from "node:path";
import { hostCacheDir, hostSkipReason, versionProblem } from "../host-install.js";

/** The Claude Code version the tests pin (test/support/claude-code/cli/package-lock.json). */
export const CLAUDE_CODE_VERSION = "2.1.328";

/** The install folder: `$BACKCHANNEL_CLAUDE_CODE_DIR`, default `${XDG_CACHE_HOME:-~/.cache}/backchannel/claude-code`. */
export function claudeCodeDir(): string {
  return hostCacheDir("claude-code", process.env.BACKCHANNEL_CLAUDE_CODE_DIR);
}

/** The native `claude` binary of this platform's package in {@link claudeCodeDir}. */
export function claudeBinary(): string {
  return join(claudeCodeDir(), "node_modules", "@anthropic-ai", `claude-code-${process.platform}-${process.arch}`, "claude");
}

/**
 * Why the Claude Code tests cannot run here, or `undefined` when the pinned version is installed.
 * @throws Error when `$CI` is set and it is missing: in CI the Claude Code tests must run.
 */
export const claudeCodeSkipReason = hostSkipReason("Claude Code", () =>
  versionProblem({
    name: "Claude Code",
    command: [claudeBinary()],
    version: CLAUDE_CODE_VERSION,
    install: "npm run claude-code:install",
    env: { DISABLE_AUTOUPDATER: "1" },
  }),
);
