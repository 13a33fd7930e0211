/**
 * The `watch_command` a server hands out works where the agent runs it: in a shell that
 * has none of the server's environment (the host started the server with its own `env`;
 * the agent's Bash has not). Real server processes, a real redis-server (with and without
 * a password), and the command run through `sh -c` exactly as given.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startProcess } from "../deploy/process.js";
import { CLI, connectServer, stderrOf, structured, tempDataDir } from "./support/helpers.js";
import { redisSkipReason, startRedis, type RedisServer } from "./support/redis-server.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

let root: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: root, cleanup } = await tempDataDir()));
after(() => cleanup());

let count = 0;
/** A fresh folder under the test's root. */
async function freshDir(name: string): Promise<string> {
  const dir = join(root, `${name}-${++count}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * The agent's shell: PATH and a HOME of its own, none of backchannel's variables. The
 * HOME is an empty folder, so a watcher that fell back to the per-user data directory
 * would find no channel there.
 */
async function agentShellEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: await freshDir("agent-home"), ...extra };
}

/** Runs `command` through `sh -c` with exactly `env`, in a process group of its own; resolves with its exit code and output. */
function runInShell(command: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, { shell: true, detached: true, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // A safety net: a hung watcher (and the shell around it) fails its test, not the run.
  const killer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Opens the reader on `server`, has the app ask once, and returns the watch command handed to the agent. */
async function openAndAsk(server: Client): Promise<{ channelId: string; watch: string }> {
  const opened = structured<{ channel_id: string; watch_command: string }>(
    await server.callTool({ name: "open_reader", arguments: { markdown: "# Notes\n\nA line to ask about." } }),
  );
  const asked = await server.callTool({
    name: "notify_agent",
    arguments: { channel_id: opened.channel_id, event: "ask", data: { question: "Why?" } },
  });
  assert.equal(asked.isError, undefined, JSON.stringify(asked.content));
  return { channelId: opened.channel_id, watch: opened.watch_command };
}

/**
 * Runs the `watch_command` of a channel that nobody writes to until its timeout, in a
 * shell without the server's environment, and checks the line it ends with: the
 * channel's title `title` (as the watcher prints it), and the same command to re-arm.
 */
async function assertRearmNames(opened: { channel_id: string; watch_command: string }, title: string, env?: Record<string, string>) {
  const run = await runInShell(`${opened.watch_command} --timeout 0.5`, env ?? (await agentShellEnv()));
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stdout, `No message on ${opened.channel_id} ("${title}") after 0.5 s. Re-arm: ${opened.watch_command}\n`);
}

/** Runs the watch command as the agent would and checks it saw the ask. */
async function assertWakes(watch: string, env: Record<string, string>, channelId: string): Promise<void> {
  const run = await runInShell(`${watch} --timeout 10`, env);
  assert.equal(run.code, 0, `the watcher woke: ${run.stdout}${run.stderr}`);
  assert.match(run.stdout, new RegExp(`^1 message waiting on ${channelId} \\(ask\\)`));
}

describe("watch_command over the file store", () => {
  test("names the data directory that BACKCHANNEL_HOME chose, and wakes in a shell without it", async () => {
    const dataDir = await freshDir("data");
    const server = await connectServer(dataDir);
    try {
      const { channelId, watch } = await openAndAsk(server);
      assert.ok(watch.endsWith(` watch ${channelId} --home ${dataDir}`), watch);
      await assertWakes(watch, await agentShellEnv(), channelId);
    } finally {
      await server.close();
    }
  });

  test("the re-arm command printed at the timeout names the same data directory", async () => {
    const dataDir = await freshDir("data");
    const server = await connectServer(dataDir);
    try {
      const opened = structured<{ channel_id: string; watch_command: string }>(
        await server.callTool({ name: "open_reader", arguments: { markdown: "# Quiet\n\nNobody asks." } }),
      );
      const run = await runInShell(`${opened.watch_command} --timeout 1`, await agentShellEnv());
      assert.equal(run.code, 2, run.stderr);
      assert.doesNotMatch(run.stderr, /nobody opened|no channel/i, "the watcher read the server's store");
      assert.ok(run.stdout.includes(`watch ${opened.channel_id} --home ${dataDir}`), run.stdout);
    } finally {
      await server.close();
    }
  });

  test("the re-arm line names the channel by its title: the reader's document, or the app's", async () => {
    const server = await connectServer(await freshDir("data"));
    try {
      const reader = structured<{ channel_id: string; watch_command: string }>(
        await server.callTool({ name: "open_reader", arguments: { markdown: "# Quarterly notes\n\nNobody asks." } }),
      );
      await assertRearmNames(reader, "Quarterly notes");
      const app = structured<{ channel_id: string; watch_command: string }>(
        await server.callTool({ name: "open_app", arguments: { html: "<p>Tally</p>", title: "Budget tally" } }),
      );
      await assertRearmNames(app, "Budget tally");
      // A title is text from outside: it reaches the agent as one line, without escapes.
      const hostile = structured<{ channel_id: string; watch_command: string }>(
        await server.callTool({ name: "open_reader", arguments: { title: "Two\nlines \u001b[31mred", text: "Quiet." } }),
      );
      await assertRearmNames(hostile, "Two lines red");
    } finally {
      await server.close();
    }
  });
});

describe("watch_command over Redis", { skip: redisSkipReason() }, () => {
  let redis: RedisServer;
  let secured: RedisServer;
  const PASSWORD = "s3cret-pass";
  before(async () => {
    redis = await startRedis();
    secured = await startRedis({ extra: ["--requirepass", PASSWORD] });
  });
  after(async () => {
    await redis?.stop();
    await secured?.stop();
  });

  test("a URL without a password is named with --store, and wakes in a shell without BACKCHANNEL_STORE", async () => {
    const server = await connectServer(await freshDir("data"), { BACKCHANNEL_STORE: redis.url(1) });
    try {
      const { channelId, watch } = await openAndAsk(server);
      assert.ok(watch.endsWith(` watch ${channelId} --store ${redis.url(1)}`), watch);
      await assertWakes(watch, await agentShellEnv(), channelId);
    } finally {
      await server.close();
    }
  });

  test("over Redis too, the re-arm line names the channel by its title", async () => {
    const server = await connectServer(await freshDir("data"), { BACKCHANNEL_STORE: redis.url(5) });
    try {
      const opened = structured<{ channel_id: string; watch_command: string }>(
        await server.callTool({ name: "open_reader", arguments: { markdown: "# Shared notes\n\nNobody asks." } }),
      );
      await assertRearmNames(opened, "Shared notes");
    } finally {
      await server.close();
    }
  });

  test("a URL read from BACKCHANNEL_STORE_FILE is handed over as that file: the password stays out of the command", async () => {
    const file = join(await freshDir("secrets"), "redis-url");
    await writeFile(file, `redis://:${PASSWORD}@127.0.0.1:${secured.port}/2\n`, { mode: 0o600 });
    const server = await connectServer(await freshDir("data"), { BACKCHANNEL_STORE_FILE: file });
    try {
      const { channelId, watch } = await openAndAsk(server);
      assert.ok(watch.endsWith(` watch ${channelId} --store-file ${file}`), watch);
      assert.doesNotMatch(watch, new RegExp(PASSWORD));
      await assertWakes(watch, await agentShellEnv(), channelId);
    } finally {
      await server.close();
    }
  });

  test("a password in BACKCHANNEL_STORE is left out of the command, with a warning that says how to hand it over", async () => {
    const url = `redis://:${PASSWORD}@127.0.0.1:${secured.port}/3`;
    const server = await connectServer(await freshDir("data"), { BACKCHANNEL_STORE: url });
    try {
      assert.match(stderrOf(server), /without its password.*BACKCHANNEL_STORE_FILE/);
      const { channelId, watch } = await openAndAsk(server);
      assert.doesNotMatch(watch, new RegExp(PASSWORD));
      assert.ok(watch.endsWith(` watch ${channelId} --store redis://127.0.0.1:${secured.port}/3`), watch);
      // A shell that has the URL in its environment lends the watcher its password.
      await assertWakes(watch, await agentShellEnv({ BACKCHANNEL_STORE: url }), channelId);
      // One that has not cannot connect, and says so instead of waiting.
      const bare = await runInShell(`${watch} --timeout 10`, await agentShellEnv());
      assert.equal(bare.code, 1, bare.stdout);
      assert.match(bare.stderr, /redis/i);
    } finally {
      await server.close();
    }
  });

  test("an HTTP server over Redis hands out --store, and wakes in a shell without BACKCHANNEL_STORE", async () => {
    const { process: served, match } = await startProcess({
      name: "serve --http",
      program: process.execPath,
      args: [CLI, "serve", "--http", "--host", "127.0.0.1", "--port", "0"],
      env: { BACKCHANNEL_HOME: await freshDir("data"), BACKCHANNEL_STORE: redis.url(4) },
      ready: /MCP server at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    });
    const client = new Client({ name: "watch-command-test", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(match[1]!)));
      const { channelId, watch } = await openAndAsk(client);
      assert.ok(watch.endsWith(` watch ${channelId} --store ${redis.url(4)}`), watch);
      await assertWakes(watch, await agentShellEnv(), channelId);
    } finally {
      await client.close();
      await served.stop();
    }
  });
});
