/**
 * A terminal program in a detached tmux pane, as a person would run it: keys typed with
 * `send-keys`, the screen read with `capture-pane`. Each pane gets its own tmux server
 * (a socket the caller names, in its temporary root), so that teardown ends that server
 * alone; the program and everything it started are ended first. The hosts' TUIs run in
 * one: Claude Code (claude-code/tui.ts), Codex CLI (codex/session.ts).
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { endProcessTree } from "./claude-code/session.js";

const run = promisify(execFile);

/** Options of {@link startPane}. */
export interface PaneOptions {
  /** The tmux server's socket: a path of the caller's, removed with its folder. */
  socket: string;
  /** The program's working folder. */
  cwd: string;
  /** The program's whole environment (`env -i`: it sees nothing of the tmux server's). */
  env: Record<string, string>;
  /** The program and its arguments. */
  command: string[];
  /** The pane's size in columns and rows. Default 200 × 50. */
  columns?: number;
  rows?: number;
}

/** A running program in a tmux pane. */
export interface Pane {
  /** The pid of the pane's process (the program). */
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
  /** Ends the program, what it started and the tmux server. */
  stop(): Promise<void>;
}

/**
 * Why the TUI tests of `host` cannot run (tmux is missing), or `undefined`.
 * @throws when `$CI` is set and tmux is missing: in CI they must run.
 */
export function tmuxMissing(host = "Claude Code"): string | undefined {
  const found = spawnSync("tmux", ["-V"], { encoding: "utf8" });
  if (found.status === 0) return undefined;
  const reason = "tmux is not installed (apt-get install tmux)";
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the ${host} TUI tests must run`);
  process.stderr.write(`\n*** SKIPPING the ${host} TUI tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
  return reason;
}

/** Starts `options.command` in a detached tmux pane of a tmux server of its own. */
export async function startPane(options: PaneOptions): Promise<Pane> {
  const tmux = (...args: string[]) => run("tmux", ["-S", options.socket, ...args], { encoding: "utf8" });
  const environment = Object.entries({ ...options.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${value}`);
  await tmux(
    "new-session",
    "-d",
    "-x",
    String(options.columns ?? 200),
    "-y",
    String(options.rows ?? 50),
    "-c",
    options.cwd,
    "env",
    "-i",
    ...environment,
    ...options.command,
  );
  const pid = Number((await tmux("display-message", "-p", "#{pane_pid}")).stdout.trim());
  let stopped = false;
  const screen = async ({ escapes = false } = {}) => (await tmux("capture-pane", "-p", ...(escapes ? ["-e"] : []))).stdout;
  const pane: Pane = {
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
          return await pane.waitForScreen(done, { timeoutMs: attempt === tries ? 30_000 : retryMs });
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
    },
  };
  return pane;
}
