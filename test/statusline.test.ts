/**
 * `backchannel statusline` as Claude Code runs it: a real process with the host's JSON
 * on stdin, over a data directory set up with the real store. It shows what waits on
 * this session's channels and the wall, nothing when nothing waits, wraps the status
 * line it replaced, finds its session through CLAUDE_PID or the process tree, and
 * starts fast.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { sessionKey, sessionKeyOfProcess } from "../core/session-key.js";
import { FileStore } from "../store/file/file-store.js";
import { withChannel } from "../store/session-record.js";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { fileURLToPath } from "node:url";
import { CLI, connectServer, standInHost, tempDataDir } from "./support/helpers.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

/** The built fixture that plays Claude Code's process tree. */
const FAKE_CLAUDE = fileURLToPath(new URL("./fixtures/fake-claude.js", import.meta.url));

/** What the host pipes to the status line (a few of its fields). */
const HOST_INPUT = JSON.stringify({ session_id: "3f2a-test", cwd: "/tmp/project", model: { display_name: "Opus" } });

/** The host session the status line runs in, unless a test says otherwise; another with channels of its own; one with none. */
const [host, elsewhere, nobody] = [standInHost(), standInHost(), standInHost()];

let dataDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;
beforeEach(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  store = new FileStore({ dataDir });
});
afterEach(() => cleanup());

/** The environment of a status line run: this process's, on `dataDir`, with `changes` (undefined removes a variable). */
function envWith(changes: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, BACKCHANNEL_HOME: dataDir, CLAUDE_PID: host.env.CLAUDE_PID, ...changes };
  for (const [name, value] of Object.entries(changes)) if (value === undefined) delete env[name];
  return env;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `command` (argv, or a shell command line) with `input` on stdin, to its exit. */
function run(command: string[] | string, options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  const started = performance.now();
  const env = options.env ?? envWith();
  const child = typeof command === "string" ? spawn(command, { shell: true, env }) : spawn(command[0]!, command.slice(1), { env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.input ?? HOST_INPUT);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })));
}

/** `backchannel statusline ...args`. */
function statusline(args: string[] = [], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return run([process.execPath, CLI, "statusline", ...args], options);
}

/** Adds channel `id` of `app` to session `key` and puts `asks` questions and the `others` events in its agent queue. */
async function channelWith(key: string, id: string, app: string, asks: number, others: string[] = []): Promise<void> {
  await store.sessions.update(key, (record) => withChannel(record, { id, app }));
  for (let i = 0; i < asks; i++) await store.append(id, "agent", "ask", { thread_id: `t-${i}`, text: `question ${i}?` });
  for (const event of others) await store.append(id, "agent", event, {});
}

/** Puts up `text` as the wall of session `key` until `until`. */
async function postWall(key: string, text: string, until: Date): Promise<void> {
  await store.sessions.update(key, (record) => ({ ...record, wall: { text, posted_at: new Date().toISOString(), until: until.toISOString() } }));
}

/** `HH:MM` of `date` in the time zone `timeZone`. */
function clock(date: Date, timeZone: string): string {
  return date.toLocaleTimeString("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hour12: false });
}

/**
 * The stash file of a status line that runs `command`, made by the real
 * `backchannel install statusline` over a settings file that had that status line.
 */
async function stashFor(command: string): Promise<string> {
  stashes += 1;
  const settings = join(dataDir, `settings-${stashes}.json`);
  await writeFile(settings, JSON.stringify({ statusLine: { type: "command", command } }));
  const installed = await run([process.execPath, CLI, "install", "statusline", "--settings", settings]);
  assert.equal(installed.code, 0, installed.stderr);
  return join(dataDir, `backchannel-statusline.settings-${stashes}.json`);
}
let stashes = 0;

describe("what it shows", () => {
  test("prints nothing and exits 0 when nothing waits: no session, only ready, a drained queue, an expired wall", async () => {
    const none = await statusline();
    assert.deepEqual([none.code, none.stdout, none.stderr], [0, "", ""]);

    const key = host.key;
    await channelWith(key, "r-ready", "reader", 0, ["ready"]);
    await channelWith(key, "r-drained", "reader", 2);
    const drained = await store.poll("r-drained", "agent", {});
    assert.equal(drained.messages.length, 2);
    await postWall(key, "Gone for lunch", new Date(Date.now() - 1000));
    const quiet = await statusline();
    assert.deepEqual([quiet.code, quiet.stdout, quiet.stderr], [0, "", ""]);
  });

  test("counts questions and other messages per app, only on this session's channels", async () => {
    const key = host.key;
    await channelWith(key, "r-1", "reader", 2, ["ready"]);
    assert.equal((await statusline()).stdout, "reader: 2 questions\n");

    await channelWith(key, "r-2", "reader", 0, ["note"]);
    // An agent-written app's ready waits for the agent (the app wants its data): it counts.
    await channelWith(key, "c-1", "channel", 1, ["ready"]);
    await channelWith(elsewhere.key, "elsewhere", "reader", 5);
    assert.equal((await statusline()).stdout, "reader: 2 questions, 1 message · channel: 1 question, 1 message\n");
    assert.equal((await statusline([], { env: envWith(elsewhere.env) })).stdout, "reader: 5 questions\n");
  });

  test("a corrupt queue or a channel listed with a bad id counts as nothing waiting", async () => {
    const key = host.key;
    await channelWith(key, "r-ok", "reader", 1);
    await channelWith(key, "r-bad", "reader", 1);
    await writeFile(join(dataDir, "channels", "r-bad", "agent.json"), "not a queue\n");
    await store.sessions.update(key, (record) => withChannel(record, { id: "../escape", app: "reader" }));
    const result = await statusline();
    assert.deepEqual([result.code, result.stdout], [0, "reader: 1 question\n"]);
  });

  test("shows the wall in local time while it lasts, then drops it", async () => {
    const key = host.key;
    const timeZone = "Asia/Kolkata"; // +05:30: a bug that shows UTC, or drops the half hour, shows here
    await channelWith(key, "r-1", "reader", 1);
    const until = new Date(Date.now() + 3_600_000);
    await postWall(key, "Reading chapter 3,\n back soon", until);
    const env = envWith({ TZ: timeZone });
    assert.equal((await statusline([], { env })).stdout, `reader: 1 question · Reading chapter 3, back soon (until ${clock(until, timeZone)})\n`);

    // Each run reads the record anew: a wall whose end is a second past stands for waiting it out.
    await postWall(key, "Reading chapter 3,\n back soon", new Date(Date.now() - 1000));
    assert.equal((await statusline([], { env })).stdout, "reader: 1 question\n");
  });

  test("cuts a long wall to keep the line short", async () => {
    const key = host.key;
    const until = new Date(Date.now() + 3_600_000);
    await postWall(key, "x".repeat(500), until);
    const line = (await statusline([], { env: envWith({ TZ: "UTC" }) })).stdout;
    assert.equal(line, `${"x".repeat(59)}… (until ${clock(until, "UTC")})\n`);
  });
});

describe("wrapping the status line it replaced", () => {
  beforeEach(() => channelWith(host.key, "r-1", "reader", 2));

  test("runs it with the host's stdin and appends ours to its last line", async () => {
    const echo = await stashFor("cat");
    assert.equal((await statusline(["--stash", echo])).stdout, `${HOST_INPUT} | reader: 2 questions\n`);

    const twoLines = await stashFor("printf 'first line\\nsecond line\\n'");
    assert.equal((await statusline(["--stash", twoLines])).stdout, "first line\nsecond line | reader: 2 questions\n");
  });

  test("prints its output alone when nothing waits, and ours alone when it prints nothing", async () => {
    const quiet = await stashFor("true");
    assert.equal((await statusline(["--stash", quiet])).stdout, "reader: 2 questions\n");
    const theirs = await stashFor("echo theirs");
    assert.equal((await statusline(["--stash", theirs], { env: envWith(nobody.env) })).stdout, "theirs\n");
  });

  test("its failure is not ours; a missing or broken stash wraps nothing", async () => {
    const failing = await stashFor("echo 'half a line'; exit 3");
    const failed = await statusline(["--stash", failing]);
    assert.deepEqual([failed.code, failed.stdout], [0, "half a line | reader: 2 questions\n"]);

    const missing = await statusline(["--stash", join(dataDir, "no-such-stash.json")]);
    assert.deepEqual([missing.code, missing.stdout], [0, "reader: 2 questions\n"]);
    const broken = join(dataDir, "broken.json");
    await writeFile(broken, "{ not json");
    assert.equal((await statusline(["--stash", broken])).stdout, "reader: 2 questions\n");
  });

  test("a command that hangs is cut off after about 2 s with what it printed", async () => {
    const hanging = await stashFor("echo partial; sleep 30");
    const result = await statusline(["--stash", hanging]);
    assert.deepEqual([result.code, result.stdout], [0, "partial | reader: 2 questions\n"]);
    assert.ok(result.ms > 1900 && result.ms < 10_000, `took ${result.ms.toFixed(0)} ms`);
  });
});

describe("the session", () => {
  test("is CLAUDE_PID when it is set", async () => {
    await channelWith(elsewhere.key, "r-1", "reader", 1);
    assert.equal((await statusline([], { env: envWith(elsewhere.env) })).stdout, "reader: 1 question\n");
    assert.equal((await statusline([], { env: envWith(nobody.env) })).stdout, "");
  });

  test("is the topmost ancestor named claude without CLAUDE_PID", {
    skip: process.platform !== "linux" && "the walk through /proc runs on Linux",
  }, async (t) => {
    const bin = await mkdtemp(join(tmpdir(), "backchannel-claude-"));
    try {
      // A shell named claude (its /proc comm is the link's name), twice: the host's
      // main process and one of its intermediate processes. The outer one waits for a
      // line on stdin, so the session file can be written once its pid is known; the
      // trailing exits keep each shell from replacing itself with its last command.
      const claude = join(bin, "claude");
      await symlink("/bin/sh", claude);
      const inner = `${process.execPath} ${CLI} statusline; exit \\$?`;
      const child = spawn(claude, ["-c", `read -r go; ${claude} -c "${inner}"; exit $?`], { env: envWith({ CLAUDE_PID: undefined }) });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));

      // Under a real Claude Code (tests run by an agent), its process is the topmost claude.
      const ambient = sessionKey({});
      const expected = ambient.startsWith("claude-") ? ambient : sessionKeyOfProcess("claude", child.pid!);
      t.diagnostic(`expecting session ${expected} (outer claude ${child.pid})`);
      await channelWith(expected, "r-walk", "reader", 3);
      child.stdin.end(`go\n${HOST_INPUT}`);
      assert.equal(await closed, 0, stderr);
      assert.equal(stdout, "reader: 3 questions\n", stderr);
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });
});

test("a real server and the status line under one Claude Code process tree agree on the session without being told", {
  skip: process.platform !== "linux" && "the walk through /proc runs on Linux",
}, async (t) => {
  const bin = await mkdtemp(join(tmpdir(), "backchannel-claude-"));
  const claude = join(bin, "claude");
  await symlink(process.execPath, claude);
  const transport = new StdioClientTransport({
    command: claude,
    args: [FAKE_CLAUDE, CLI],
    env: envWith({ CLAUDE_PID: undefined }) as Record<string, string>,
    stderr: "pipe",
  });
  let stderr = "";
  const waiters: (() => void)[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    waiters.splice(0).forEach((wake) => wake());
  });
  const nextStatusline = async (): Promise<string> => {
    const seen = stderr.length;
    process.kill(transport.pid!, "SIGUSR2");
    for (;;) {
      const line = /statusline: (.*)\n/.exec(stderr.slice(seen));
      if (line) return line[1]!;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const agent = new Client({ name: "fake-claude-code", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
  // The app's calls come through another process of another session, as in Claude Desktop.
  const app = await connectServer(dataDir, { CLAUDE_PID: "1" });
  try {
    await agent.connect(transport);
    const ambient = sessionKey({});
    const expected = ambient.startsWith("claude-") ? ambient : sessionKeyOfProcess("claude", transport.pid!);
    t.diagnostic(`expecting session ${expected} (fake claude ${transport.pid})`);
    assert.equal(await nextStatusline(), "", "silent while nothing waits");

    const opened = await agent.callTool({ name: "open_reader", arguments: { markdown: "# Walk\n\nUp the process tree." } });
    const channelId = (opened.structuredContent as { channel_id: string }).channel_id;
    for (const question of ["Up to where?", "Why the topmost?"]) {
      await app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data: { question } } });
    }
    await agent.callTool({ name: "post_wall", arguments: { text: "Reading chapter 3", duration_s: 600 } });
    assert.match(await nextStatusline(), /^reader: 2 questions · Reading chapter 3 \(until \d\d:\d\d\)$/);
    assert.deepEqual(
      (await store.sessions.read(expected)).channels.map((channel) => channel.id),
      [channelId],
      "the server recorded the channel under the fake claude's session",
    );

    await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId } });
    await agent.callTool({ name: "post_wall", arguments: { clear: true } });
    assert.equal(await nextStatusline(), "", "silent again once the questions are read and the wall is down");
  } finally {
    await Promise.all([agent.close(), app.close()]);
    await rm(bin, { recursive: true, force: true });
  }
});

test("starts fast: the median of 10 runs with 3 channels waiting is well under a second", async (t) => {
  const key = host.key;
  for (const id of ["r-1", "r-2", "r-3"]) await channelWith(key, id, "reader", 2);
  await postWall(key, "Reading", new Date(Date.now() + 3_600_000));
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const result = await statusline();
    assert.match(result.stdout, /^reader: 6 questions · Reading \(until \d\d:\d\d\)\n$/);
    times.push(result.ms);
  }
  const bare: number[] = [];
  for (let i = 0; i < 10; i++) bare.push((await run([process.execPath, "-e", "0"])).ms);
  t.diagnostic(`statusline median ${median(times).toFixed(0)} ms; a bare node -e 0 median ${median(bare).toFixed(0)} ms`);
  assert.ok(median(times) < 1000, `median ${median(times).toFixed(0)} ms`);
});

test("--help prints usage; an unknown option exits 1", () => {
  const help = spawnSync(process.execPath, [CLI, "statusline", "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: backchannel statusline/);
  const bad = spawnSync(process.execPath, [CLI, "statusline", "--bogus"], { encoding: "utf8" });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /bogus/);
});
