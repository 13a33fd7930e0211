/**
 * The interactive Claude Code TUI (the real `claude`, no `-p`) in a detached tmux pane,
 * with the HOME and working folder session.ts prepares. The first-run screens are skipped
 * the way Claude Code records them as done in `$HOME/.claude.json` (onboarding finished,
 * the folder trusted, the `ANTHROPIC_API_KEY` approved): without that its onboarding
 * tries api.anthropic.com and stops at "Unable to connect to Anthropic services".
 *
 * Each TUI gets its own tmux server (a socket in its temporary root), so that teardown
 * ends that server alone; `claude` and everything it started are ended first.
 */
import { execFile, spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { claudeBinary } from "./install.js";
import { type ClaudeHome, type ClaudeOptions, endProcessTree, prepareClaude } from "./session.js";

const run = promisify(execFile);

/** Options of {@link startTui}. */
export interface TuiOptions extends ClaudeOptions {
  /** The pane's size in columns and rows. Default 200 × 50. */
  columns?: number;
  rows?: number;
  /** Runs after the HOME is prepared and before `claude` starts (e.g. `backchannel install statusline` in that HOME). */
  prepare?: (prepared: ClaudeHome) => Promise<void>;
}

/** A running TUI in tmux. */
export interface ClaudeTui {
  /** HOME, working folder and environment of the session. */
  prepared: ClaudeHome;
  /** The pid of `claude` (the pane's process). */
  pid: number;
  /** What the pane shows now, as text (`tmux capture-pane -p`); with `escapes`, the colours and attributes as SGR sequences (`-e`). */
  screen(options?: { escapes?: boolean }): Promise<string>;
  /** The pane's title (`#{pane_title}`), which a terminal's OSC 0 or 2 sets. */
  title(): Promise<string>;
  /** Types `text` literally (`send-keys -l`), without pressing Enter. */
  type(text: string): Promise<void>;
  /** Presses keys by tmux's names (`Enter`, `Escape`, `Down`, `Tab`, `C-c`). */
  press(...keys: string[]): Promise<void>;
  /**
   * Presses `key` until the screen shows what it leads to (`done`): once, then again
   * each time `retryMs` (default 3,000) passes with no such screen, at most `tries`
   * (default 4) times. A key pressed on a screen just drawn is lost at times on a loaded
   * machine (its handler not yet in place), and nothing tells when it is.
   * @throws when the last try times out, with the last screen.
   */
  pressUntil(key: string, done: (screen: string) => boolean, options?: { retryMs?: number; tries?: number }): Promise<string>;
  /**
   * Resolves with the screen once `match` accepts it and it has stayed the same for
   * 100 ms, looking every 100 ms (tmux tells nothing when a pane changes).
   * @throws when `timeoutMs` (default 30,000) passes first, with the last screen.
   */
  waitForScreen(match: (screen: string) => boolean, options?: { timeoutMs?: number; escapes?: boolean }): Promise<string>;
  /** Ends `claude`, what it started and the tmux server, and removes its HOME. */
  stop(): Promise<void>;
}

/** Whether tmux is installed (the TUI tests skip without it, as without Claude Code). */
export function tmuxMissing(): string | undefined {
  const found = spawnSync("tmux", ["-V"], { encoding: "utf8" });
  if (found.status === 0) return undefined;
  const reason = "tmux is not installed (apt-get install tmux)";
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the Claude Code TUI tests must run`);
  process.stderr.write(`\n*** SKIPPING the Claude Code TUI tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
  return reason;
}

/** Starts the TUI in a detached tmux pane and waits for its prompt box (`❯`). */
export async function startTui(options: TuiOptions): Promise<ClaudeTui> {
  const prepared = await prepareClaude(options);
  await skipFirstRun(prepared);
  await options.prepare?.(prepared);
  const socket = join(dirname(prepared.home), "tmux.sock");
  const tmux = (...args: string[]) => run("tmux", ["-S", socket, ...args], { encoding: "utf8" });
  const environment = Object.entries({ ...prepared.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${value}`);
  // `env -i`: claude sees the prepared environment only, not the tmux server's.
  await tmux(
    "new-session",
    "-d",
    "-x",
    String(options.columns ?? 200),
    "-y",
    String(options.rows ?? 50),
    "-c",
    prepared.cwd,
    "env",
    "-i",
    ...environment,
    claudeBinary(),
    ...prepared.args,
    // The TUI's default is auto mode, whose safety check runs at Anthropic: through the
    // scripted model it stops the first tool call at "Auto mode can't check actions in
    // this session". The allowed tools are allowed without it.
    "--permission-mode",
    "default",
  );
  const pid = Number((await tmux("display-message", "-p", "#{pane_pid}")).stdout.trim());
  let stopped = false;
  const screen = async ({ escapes = false } = {}) => (await tmux("capture-pane", "-p", ...(escapes ? ["-e"] : []))).stdout;
  const tui: ClaudeTui = {
    prepared,
    pid,
    screen,
    async title() {
      return (await tmux("display-message", "-p", "#{pane_title}")).stdout.trim();
    },
    async type(text) {
      await tmux("send-keys", "-l", text);
    },
    async press(...keys) {
      await tmux("send-keys", ...keys);
    },
    async pressUntil(key, done, { retryMs = 3000, tries = 4 } = {}) {
      for (let attempt = 1; ; attempt++) {
        await tmux("send-keys", key);
        try {
          return await tui.waitForScreen(done, { timeoutMs: attempt === tries ? 30_000 : retryMs });
        } catch (error) {
          if (attempt === tries) throw error;
        }
      }
    },
    async waitForScreen(match, { timeoutMs = 30_000, escapes = false } = {}) {
      const deadline = performance.now() + timeoutMs;
      let previous: string | undefined;
      for (;;) {
        const shown = await screen({ escapes });
        // The same screen twice, 100 ms apart: a key pressed on a screen just drawn was lost
        // at times (the form's Enter on Accept), as if its handler was not yet in place.
        if (match(shown) && shown === previous) return shown;
        previous = shown;
        if (performance.now() > deadline) throw new Error(`the TUI never showed what was awaited within ${timeoutMs} ms; it shows:\n${shown}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await endProcessTree(pid);
      await tmux("kill-server").catch(() => undefined);
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
