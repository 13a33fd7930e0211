/**
 * Shared test fixtures: throwaway data directories, real server processes behind the
 * SDK's own `Client`, and the real `backchannel` command as a child process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, type ClientCapabilities } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { sessionKeyOfProcess } from "../../core/session-key.js";
import { APPS_HOST_EXTENSIONS } from "../../protocol/client-capabilities.js";

/** The built CLI entry, `dist/cli/main.js`. */
export const CLI = fileURLToPath(new URL("../../cli/main.js", import.meta.url));

/** What a run of the command printed, and how it exited. */
export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `backchannel ...args` with `input` on its stdin (as a host runs a hook), to its exit. */
export function runCommand(args: string[], input: string): Promise<CommandRun> {
  const child = spawn(process.execPath, [CLI, ...args]);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** A fresh data directory under the system temp folder, and a function that removes it. */
export async function tempDataDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "backchannel-test-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A process standing for a host's main process (Claude Code's): see {@link standInHost}. */
export interface StandInHost {
  pid: number;
  /** The environment that puts a process in this host's session: `{ CLAUDE_PID: <pid> }`. */
  env: { CLAUDE_PID: string };
  /** The session key every process of this session finds. */
  key: string;
}

/**
 * A `sleep` standing for Claude Code's main process, alive until this test process
 * exits. A made-up CLAUDE_PID will not do: the session key digests the start time of
 * the process that pid names (core/session-key.ts), and on a busy machine pids wrap
 * around, so two processes that compute the key while an unrelated process takes or
 * frees that pid disagree on the session.
 */
export function standInHost(): StandInHost {
  const host = spawn("sleep", ["86400"], { stdio: "ignore" });
  host.unref();
  process.once("exit", () => host.kill());
  const pid = host.pid!;
  return { pid, env: { CLAUDE_PID: String(pid) }, key: sessionKeyOfProcess("claude", pid) };
}

/** What each connected server printed on stderr, by client. */
const serverStderr = new WeakMap<Client, () => string>();

/** Options of {@link connectServer}. */
export interface ConnectOptions {
  /** The server's working directory. Default: this process's. */
  cwd?: string;
  /**
   * What the client declares it can do (e.g. `{ elicitation: {} }`). Default: the MCP
   * Apps extension, as the client of a host that shows apps, whose model and apps most
   * tests play at once; `{}` plays a client that shows none (a terminal agent).
   */
  capabilities?: ClientCapabilities;
  /** Called before the client connects: register request handlers here. */
  prepare?: (client: Client) => void;
  /** Speak the 2026-07-28 protocol (no server-sent requests). Default: the SDK's default, 2025-11-25. */
  modern?: boolean;
  /** The client's name (`clientInfo.name`). Default `backchannel-test`. */
  name?: string;
  /** Arguments after `serve` (e.g. `["--wake", "hook"]`). Default none. */
  args?: string[];
}

/**
 * An SDK client connected to a new `backchannel serve` process on `dataDir`. The
 * server's stderr is collected (see {@link stderrOf}), so that it can never fill its
 * pipe and block the server.
 */
export async function connectServer(dataDir: string, env: Record<string, string> = {}, options: ConnectOptions = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "serve", ...(options.args ?? [])],
    env: { ...(process.env as Record<string, string>), BACKCHANNEL_HOME: dataDir, ...env },
    stderr: "pipe",
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client(
    { name: options.name ?? "backchannel-test", version: "0.0.0" },
    {
      capabilities: options.capabilities ?? { extensions: APPS_HOST_EXTENSIONS },
      ...(options.modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
    },
  );
  options.prepare?.(client);
  await client.connect(transport);
  serverStderr.set(client, () => stderr);
  return client;
}

/**
 * Waits for a state no event announces (a file another process writes, a page's layout):
 * checks `check` at once, then every `intervalMs` (default 50), until it gives a value
 * other than `undefined`, `null` or `false`; a check that throws counts as "not yet".
 * @returns that value.
 * @param what what is awaited, for the error; a function is asked only then (to say what was seen).
 * @throws an Error naming `what` (and the last check's error) once `timeoutMs` (default 10,000) passed.
 */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  what: string | (() => string),
  { timeoutMs = 10_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Exclude<T, undefined | null | false>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let failure: unknown;
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
    } catch (error) {
      failure = error;
    }
    if (performance.now() > deadline) {
      const described = typeof what === "string" ? what : what();
      throw new Error(`not ${described} within ${timeoutMs} ms${failure ? ` (${(failure as Error).message})` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Everything the server behind `client` printed on stderr so far. */
export function stderrOf(client: Client): string {
  return serverStderr.get(client)?.() ?? "";
}

/** The process id of the server behind `client` (made by {@link connectServer}). */
export function pidOf(client: Client): number {
  const pid = (client.transport as StdioClientTransport | undefined)?.pid;
  if (typeof pid !== "number") throw new Error("the client has no server process");
  return pid;
}

/** A running `backchannel watch` child with its output collected. */
export interface WatcherProcess {
  child: ChildProcess;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves when stdout holds at least `count` lines. */
  lines(count: number): Promise<string[]>;
  /** Resolves when the watcher says on stderr that it is waiting. */
  ready(): Promise<void>;
  /** Resolves when stderr matches `pattern`. */
  stderrMatching(pattern: RegExp): Promise<void>;
}

/** Spawns `backchannel watch ...args` on `dataDir`, with `env` added to this process's environment. */
export function spawnWatcher(dataDir: string, args: string[], env: Record<string, string> = {}): WatcherProcess {
  const child = spawn(process.execPath, [CLI, "watch", ...args], {
    env: { ...process.env, BACKCHANNEL_HOME: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const waiters: (() => void)[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    waiters.splice(0).forEach((wake) => wake());
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString();
    waiters.splice(0).forEach((wake) => wake());
  });
  // "close", not "exit": it comes after the pipes are drained, so `stdout()` is whole by then.
  let closed = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      closed = true;
      waiters.splice(0).forEach((wake) => wake());
      resolve(code);
    }),
  );
  const split = () => out.split("\n").filter((line) => line.length > 0);
  return {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    async lines(count) {
      while (split().length < count) {
        if (closed) throw new Error(`watcher exited (${child.exitCode}) with ${split().length} lines: ${out}${err}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      return split();
    },
    ready() {
      return this.stderrMatching(/waiting for messages/);
    },
    async stderrMatching(pattern) {
      while (!pattern.test(err)) {
        if (closed) throw new Error(`watcher exited (${child.exitCode}) before stderr matched ${pattern}: ${out}${err}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** The `structuredContent` of a tool result. @throws when the result is an error. */
export function structured<T>(result: { structuredContent?: unknown; isError?: boolean; content?: unknown }): T {
  if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** A running playground (`backchannel web --playground --port 0`) and the link it printed. */
export interface PlaygroundProcess {
  child: ChildProcess;
  /** The link it printed: its address, with the key (`?k=`). */
  url: URL;
  /** The link to `path` (e.g. `/?agent=off#<channel>`) on the playground, with the key added to its query. */
  page(path: string): string;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** Stops it and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts the playground on a free port over `dataDir`, with `args` added and `env` (e.g. a Redis store); resolves once it prints its URL. */
export async function startPlayground(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<PlaygroundProcess> {
  const child = spawn(process.execPath, [CLI, "web", "--playground", "--port", "0", ...args], {
    env: { ...process.env, BACKCHANNEL_HOME: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<URL>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = out.match(/backchannel playground: (http:\/\/\S+)/);
      if (match) resolve(new URL(match[1]!));
    });
    child.once("exit", (code) => reject(new Error(`the playground exited (${code}) before it listened: ${out}${err}`)));
  });
  return {
    child,
    url,
    page: (path) => withKey(path, url),
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill();
      await exited;
    },
  };
}

/** `path` on the browser host of `link` (one it printed, with its key), the key added to the query. */
export function withKey(path: string, link: URL): string {
  const page = new URL(path, link);
  page.searchParams.set("k", link.searchParams.get("k") ?? "");
  return page.href;
}

/**
 * GETs a link of a browser host (its key in the query) as a browser's first load does:
 * the key is exchanged for a session, whose page is then fetched with its cookie.
 * @returns the page's response, and the session's address and cookie for more requests.
 * @throws when the host does not answer the exchange with a session.
 */
export async function openBrowserLink(link: string): Promise<{ page: Response; session: URL; cookie: string }> {
  const exchange = await fetch(link, { redirect: "manual" });
  // The exchange's page names the session's page, where a browser goes on to (web/gate.ts).
  const location = /<meta name="backchannel-session" content="([^"]+)">/.exec(await exchange.text())?.[1]?.replace(/&amp;/g, "&");
  const cookie = exchange.headers.get("set-cookie")?.split(";")[0];
  if (exchange.status !== 200 || !location || !cookie) throw new Error(`the host answered the link with ${exchange.status}, not a session`);
  const session = new URL(location, link);
  return { page: await fetch(session, { headers: { cookie } }), session, cookie };
}

/** Where Debian's Chromium lives; `$CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** The flags every browser test launches Chromium with. */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"];

/**
 * Why the browser tests cannot run here, or `undefined` when Chromium is installed.
 * @throws Error when `$CI` is set and Chromium is missing: in CI a missing browser fails the run.
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  const reason = `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the browser tests must run`);
  process.stderr.write(`\n*** SKIPPING the browser tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
  return reason;
}

/** Two server processes over one fresh data directory, as hosts run them: the model's session and the app's. */
export interface ServerPair {
  dataDir: string;
  agent: Client;
  app: Client;
  /** Closes both and removes the data directory. */
  close(): Promise<void>;
}

/** Starts a {@link ServerPair}. */
export async function startServerPair(): Promise<ServerPair> {
  const { dir: dataDir, cleanup } = await tempDataDir();
  const [agent, app] = await Promise.all([connectServer(dataDir), connectServer(dataDir)]);
  return {
    dataDir,
    agent,
    app,
    async close() {
      await Promise.allSettled([agent.close(), app.close()]);
      await cleanup();
    },
  };
}
