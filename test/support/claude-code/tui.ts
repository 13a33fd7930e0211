/**
 * The interactive Claude Code TUI (the real `claude`, no `-p`) in a detached tmux pane,
 * with the HOME and working folder session.ts prepares. The first-run screens are skipped
 * the way Claude Code records them as done in `$HOME/.claude.json` (onboarding finished,
 * the folder trusted, the `ANTHROPIC_API_KEY` approved): without that its onboarding
 * tries api.anthropic.com and stops at "Unable to connect to Anthropic services".
 *
 * Each TUI gets its own tmux server (../tmux-pane.ts), so that teardown ends that server
 * alone; `claude` and everything it started are ended first.
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Pane, startPane, tmuxMissing } from "../tmux-pane.js";
import { claudeBinary } from "./install.js";
import { type ClaudeHome, type ClaudeOptions, prepareClaude } from "./session.js";

/** Options of {@link startTui}. */
export interface TuiOptions extends ClaudeOptions {
  /** The pane's size in columns and rows. Default 200 × 50. */
  columns?: number;
  rows?: number;
  /** Runs after the HOME is prepared and before `claude` starts (e.g. `backchannel install statusline` in that HOME). */
  prepare?: (prepared: ClaudeHome) => Promise<void>;
}

/** A running TUI in tmux (a pane, ../tmux-pane.ts). */
export interface ClaudeTui extends Pane {
  /** HOME, working folder and environment of the session. */
  prepared: ClaudeHome;
  /** Ends `claude`, what it started and the tmux server, and removes its HOME. */
  stop(): Promise<void>;
}

export { tmuxMissing };

/** Starts the TUI in a detached tmux pane and waits for its prompt box (`❯`). */
export async function startTui(options: TuiOptions): Promise<ClaudeTui> {
  const prepared = await prepareClaude(options);
  await skipFirstRun(prepared);
  await options.prepare?.(prepared);
  const pane = await startPane({
    socket: join(dirname(prepared.home), "tmux.sock"),
    cwd: prepared.cwd,
    env: prepared.env,
    columns: options.columns ?? 200,
    rows: options.rows ?? 50,
    // The TUI's default is auto mode, whose safety check runs at Anthropic: through the
    // scripted model it stops the first tool call at "Auto mode can't check actions in
    // this session". The allowed tools are allowed without it.
    command: [claudeBinary(), ...prepared.args, "--permission-mode", "default"],
  });
  const tui: ClaudeTui = {
    ...pane,
    prepared,
    async stop() {
      await pane.stop();
      await prepared.cleanup();
    },
  };
  try {
    await tui.waitForScreen((shown) => /^❯/m.test(shown));
  } catch (error) {
    await tui.stop();
    throw error;
  }
  return tui;
}

/** Records the first-run screens as done in `$HOME/.claude.json`, which `claude mcp add` may have written already. */
async function skipFirstRun(prepared: ClaudeHome): Promise<void> {
  const path = join(prepared.home, ".claude.json");
  const config = JSON.parse(await readFile(path, "utf8").catch(() => "{}")) as Record<string, unknown>;
  const projects = (config.projects ?? {}) as Record<string, Record<string, unknown>>;
  const key = prepared.env.ANTHROPIC_API_KEY ?? "";
  await writeFile(
    path,
    JSON.stringify({
      ...config,
      hasCompletedOnboarding: true,
      theme: "dark",
      // Claude Code asks once whether to use a key from the environment; it remembers the key's last 20 characters.
      customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
      projects: { ...projects, [prepared.cwd]: { ...projects[prepared.cwd], hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
}
