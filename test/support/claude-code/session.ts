/**
 * The real `claude` (see install.ts) against the scripted model (model-server.ts), with
 * a fresh HOME and working folder, and backchannel configured as the README tells a user:
 * `claude mcp add backchannel -- node <this checkout>/dist/cli/main.js` (or, on request,
 * `--mcp-config`). Two ways to run it: {@link runPrint} (`claude -p <prompt>`, one turn
 * then exit) and {@link startSession} (`-p --input-format stream-json`, a long-lived
 * session that stays idle between turns while its stdin is open, like the interactive one).
 *
 * Teardown ends `claude` and everything it started (MCP servers, background commands,
 * monitors): each run gets its own process group, and every descendant still alive is
 * signalled too.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI } from "../helpers.js";
import { claudeBinary } from "./install.js";
import type { ModelServer } from "./model-server.js";
import { nextWake } from "./next-wake.js";

/**
 * How Claude Code 2.1.328 opens a stdio server (docs/hosts.md): protocol 2026-07-28, its
 * name, roots and elicitation, no MCP Apps extension. For a test's own client that must
 * be offered what Claude Code is (connectServer's options).
 */
export const AS_CLAUDE_CODE = {
  capabilities: { roots: { listChanged: true }, elicitation: { form: {}, url: {} } },
  modern: true,
  name: "claude-code",
} as const;

/** The tools the tests let the model use without asking (`--allowedTools`). */
export const ALLOWED_TOOLS = ["mcp__backchannel", "Bash", "Monitor", "ToolSearch", "Read"];

/** Options of {@link prepareClaude}, {@link runPrint} and {@link startSession}. */
export interface ClaudeOptions {
  /** The scripted model Claude Code talks to. */
  model: ModelServer;
  /** backchannel's data directory (`BACKCHANNEL_HOME` of the server and of the commands the model runs). */
  dataDir: string;
  /** How backchannel is configured: `mcp add` (the README's line, default), an `--mcp-config` file, or not at all (a baseline). */
  configure?: "mcp-add" | "mcp-config" | "none";
  /** Arguments after `dist/cli/main.js` for the server (e.g. `["serve", "--claude-channel"]`). Default none. */
  serverArgs?: string[];
  /** More arguments for `claude` (e.g. `["--dangerously-load-development-channels", "server:backchannel"]`). */
  args?: string[];
  /** Written to `$HOME/.claude/settings.json` before the start (hooks, status line). */
  settings?: Record<string, unknown>;
  /** More environment for `claude` (and so for what it starts). */
  env?: Record<string, string>;
  /** Tools allowed without asking. Default {@link ALLOWED_TOOLS}. */
  allowedTools?: string[];
}

/** A fresh HOME and working folder with backchannel configured in them. */
export interface ClaudeHome {
  home: string;
  /** The working folder `claude` runs in. */
  cwd: string;
  /** The environment `claude` runs with. */
  env: Record<string, string>;
  /** `claude`'s arguments before the mode's own (MCP config, allowed tools, the test's `args`). */
  args: string[];
  /** Removes HOME and the working folder. */
  cleanup(): Promise<void>;
}

/**
 * Makes a fresh HOME and working folder, writes `settings`, and configures backchannel
 * (running `claude mcp add` for real in the default mode).
 * @throws when `claude mcp add` fails.
 */
export async function prepareClaude(options: ClaudeOptions): Promise<ClaudeHome> {
  const root = await mkdtemp(join(tmpdir(), "backchannel-claude-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  await mkdir(join(home, ".claude"), { recursive: true });
  await mkdir(cwd);
  if (options.settings) await writeFile(join(home, ".claude", "settings.json"), JSON.stringify(options.settings, null, 2));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: join(root, "tmp"),
    ANTHROPIC_BASE_URL: options.model.url,
    ANTHROPIC_API_KEY: "any",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // Claude Code connects MCP servers in the background by default, so a first request
    // can go out before backchannel is there (seen here under load); wait for it instead.
    MCP_CONNECTION_NONBLOCKING: "false",
    BACKCHANNEL_HOME: options.dataDir,
    ...options.env,
  };
  await mkdir(env.TMPDIR!, { recursive: true });
  const server = [process.execPath, CLI, ...(options.serverArgs ?? [])];
  const args: string[] = [];
  const configure = options.configure ?? "mcp-add";
  if (configure === "mcp-add") {
    const added = spawnSync(claudeBinary(), ["mcp", "add", "backchannel", "-e", `BACKCHANNEL_HOME=${options.dataDir}`, "--", ...server], {
      cwd,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    if (added.status !== 0) throw new Error(`claude mcp add failed (${added.status}): ${added.stderr}${added.stdout}`);
  } else if (configure === "mcp-config") {
    const config = join(root, "mcp.json");
    const [command, ...serverArgs] = server;
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { backchannel: { command, args: serverArgs, env: { BACKCHANNEL_HOME: options.dataDir } } } }),
    );
    args.push("--mcp-config", config);
  }
  args.push("--allowedTools", (options.allowedTools ?? ALLOWED_TOOLS).join(","), ...(options.args ?? []));
  return { home, cwd, env, args, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** What `claude -p` did. */
export interface PrintResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** `performance.now()` when `claude` exited (its output closed). */
  endedAt: number;
}

/**
 * Runs `claude -p <prompt>` to its end (a fresh HOME each time) and removes the HOME.
 * @throws when it runs longer than `timeoutMs` (default 120,000; it is killed first).
 */
export async function runPrint(prompt: string, options: ClaudeOptions & { timeoutMs?: number }): Promise<PrintResult> {
  const prepared = await prepareClaude(options);
  const child = spawnClaude(prepared, ["-p", prompt], "ignore");
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timeoutMs = options.timeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    let endedAt = 0;
    const code = await Promise.race([
      new Promise<number | null>((resolve) =>
        child.on("close", (exit: number | null) => {
          endedAt = performance.now();
          resolve(exit);
        }),
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`claude -p ran over ${timeoutMs} ms: ${stderr}`)), timeoutMs);
      }),
    ]);
    return { code, stdout, stderr, endedAt };
  } finally {
    clearTimeout(timer);
    await endTree(child);
    await prepared.cleanup();
  }
}

/** A line of `--output-format stream-json`. */
export interface StreamEvent {
  type: string;
  subtype?: string;
  [key: string]: unknown;
}

/** A long-lived `claude -p --input-format stream-json` session. */
export interface ClaudeSession {
  /** HOME, working folder and environment of the session. */
  prepared: ClaudeHome;
  child: ChildProcess;
  /** Every line it printed on stdout so far, parsed. */
  events: StreamEvent[];
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** Sends a user message (a new turn). */
  send(text: string): void;
  /**
   * Answers a `control_request` Claude Code printed (an elicitation: `response` is
   * `{action, content?}`), as the Agent SDK's host does on stdin.
   */
  respond(requestId: string, response: Record<string, unknown>): void;
  /**
   * Resolves with the first event at or after `from` (an index into {@link events})
   * that `match` accepts.
   * @throws when `claude` exits or `timeoutMs` (default 60,000) passes first.
   */
  waitForEvent(match: (event: StreamEvent) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<StreamEvent>;
  /** Ends the session and everything it started, and removes its HOME. */
  stop(): Promise<void>;
}

/** Starts a long-lived session: `claude -p --input-format stream-json --output-format stream-json --verbose`, stdin kept open. */
export async function startSession(options: ClaudeOptions): Promise<ClaudeSession> {
  const prepared = await prepareClaude(options);
  const child = spawnClaude(prepared, ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"], "pipe");
  const events: StreamEvent[] = [];
  let stderr = "";
  let partial = "";
  let closed = false;
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of waiters) wake();
  };
  child.stdout!.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        events.push(JSON.parse(line) as StreamEvent);
      } catch {
        events.push({ type: "unparsed", line });
      }
    }
    wakeAll();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.on("close", () => {
    closed = true;
    wakeAll();
  });
  let stopped = false;
  return {
    prepared,
    child,
    events,
    stderr: () => stderr,
    send(text) {
      child.stdin!.write(`${JSON.stringify({ type: "user", message: { role: "user", content: text } })}\n`);
    },
    respond(requestId, response) {
      child.stdin!.write(`${JSON.stringify({ type: "control_response", response: { subtype: "success", request_id: requestId, response } })}\n`);
    },
    async waitForEvent(match, { from = 0, timeoutMs = 60_000 } = {}) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (closed) throw new Error(`claude exited (${child.exitCode}) before the event came: ${stderr}`);
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no matching event from claude within ${timeoutMs} ms (${events.length} events so far)`);
        await nextWake(waiters, left);
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      child.stdin!.end();
      await endTree(child);
      await prepared.cleanup();
    },
  };
}

function spawnClaude(prepared: ClaudeHome, modeArgs: string[], stdin: "pipe" | "ignore"): ChildProcess {
  return spawn(claudeBinary(), [...modeArgs, ...prepared.args], {
    cwd: prepared.cwd,
    env: prepared.env,
    stdio: [stdin, "pipe", "pipe"],
    // Its own process group, so that teardown reaches what it started.
    detached: true,
  });
}

/** Ends `child`, its process group and every descendant still running: SIGTERM, then SIGKILL after 3 s. */
async function endTree(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  await endProcessTree(pid);
  if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once("close", resolve));
}

/**
 * Ends process `pid` (a group leader, or not), its process group and every descendant
 * still running: SIGTERM, then SIGKILL to those left after 3 s.
 */
export async function endProcessTree(pid: number): Promise<void> {
  const tree = [pid, ...(await descendants(pid))];
  const signal = (name: NodeJS.Signals) => {
    for (const target of [-pid, ...tree]) {
      try {
        process.kill(target, name);
      } catch {
        // already gone
      }
    }
  };
  signal("SIGTERM");
  const deadline = performance.now() + 3_000;
  while (tree.some(alive) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (tree.some(alive)) signal("SIGKILL");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The ids of every process descending from `root`, read from /proc (Linux). */
export async function descendants(root: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(join("/proc", name, "stat"), "utf8").catch(() => "");
    // The parent id is the second field after the command, which is in parentheses and may hold spaces.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (!Number.isFinite(ppid)) continue;
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
