/**
 * A session key never repeats (core/session-key.ts): a Claude Code session that ended
 * and a later one whose main process got the same pid, and two users on a shared Redis
 * whose Claude Code runs in containers with the same pid, never share a session. Real
 * servers, status lines and wake hooks, run inside real pid namespaces
 * (test/support/pid-namespace.ts) where the test chooses each host's pid; the hosts are
 * `sleep` processes standing for Claude Code's main process, named by CLAUDE_PID as
 * Claude Code names it.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chown, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TIMEOUT_NOTE } from "../claude-code/stop-hook.js";
import { CLI, connectServer, structured, tempDataDir } from "./support/helpers.js";
import { AS_OTHER_USER, OTHER_USER, otherUserSkipReason } from "./support/other-user.js";
import { makePidNamespace, type PidNamespace, pidNamespaceSkip } from "./support/pid-namespace.js";
import { type RedisServer, redisSkipReason, startRedis } from "./support/redis-server.js";

/** The pid every host gets in its namespace. */
const HOST_PID = 100;

/** A Stop hook's input and a status line's, as Claude Code writes them. */
const STOP_INPUT = JSON.stringify({
  session_id: "s",
  transcript_path: "/tmp/t.jsonl",
  cwd: "/tmp",
  hook_event_name: "Stop",
  stop_hook_active: false,
});
const STATUS_INPUT = JSON.stringify({ session_id: "s", cwd: "/tmp" });

/** Starts the host (a `sleep`) inside `ns` with pid {@link HOST_PID}. */
function startHost(ns: PidNamespace): Promise<ChildProcess> {
  return ns.startAt(HOST_PID, ["sleep", "600"]);
}

/** Ends the host inside `ns`, and waits until it is gone. */
async function endHost(ns: PidNamespace, host: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => host.once("close", resolve));
  await runIn(ns, ["kill", String(HOST_PID)], {});
  await gone;
}

/** Runs `command` inside `ns` with `env` added and `input` on stdin: its exit code and its stdout and stderr. */
function runIn(
  ns: PidNamespace,
  command: string[],
  env: Record<string, string>,
  input = "",
): Promise<{ code: number | null; out: string; err: string }> {
  const [file, ...args] = ns.command(command);
  const child = spawn(file!, args, { env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  // A command that reads no stdin may end before it is written: that is no error here.
  child.stdin.on("error", () => undefined);
  child.stdin.end(input);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err })));
}

/** An SDK client of a `backchannel serve` inside `ns`, started by the host of pid {@link HOST_PID} (its CLAUDE_PID). */
async function serverIn(ns: PidNamespace, env: Record<string, string>): Promise<Client> {
  const [command, ...args] = ns.command([process.execPath, CLI, "serve"]);
  const transport = new StdioClientTransport({
    command: command!,
    args,
    env: { ...(process.env as Record<string, string>), ...env, CLAUDE_PID: String(HOST_PID) },
    stderr: "ignore",
  });
  const client = new Client({ name: "backchannel-test", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

/** The agent opens a reader titled `title` on its session; the app asks `question` there. Resolves with the channel. */
async function askOnNewReader(agent: Client, app: Client, title: string, question: string): Promise<string> {
  const opened = await agent.callTool({ name: "open_reader", arguments: { title, markdown: `# ${title}\n\nThe figures.` } });
  const channel = structured<{ channel_id: string }>(opened).channel_id;
  const asked = await app.callTool({
    name: "notify_agent",
    arguments: { channel_id: channel, event: "ask", data: { thread_id: "t-1", quote: "The figures.", question, history: [] } },
  });
  assert.ok(!asked.isError, JSON.stringify(asked.content));
  return channel;
}

const skip = pidNamespaceSkip();

describe("a session whose host's pid was used by an ended session", { skip }, () => {
  let ns: PidNamespace;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    ns = await makePidNamespace();
    ({ dir: dataDir, cleanup } = await tempDataDir());
  });
  after(async () => {
    await ns?.close();
    await cleanup?.();
  });

  test("is a session of its own: the ended one's unanswered ask neither shows nor wakes it", { timeout: 120_000 }, async () => {
    const env = { BACKCHANNEL_HOME: dataDir, CLAUDE_PID: String(HOST_PID) };
    const first = await startHost(ns);
    const agent = await serverIn(ns, { BACKCHANNEL_HOME: dataDir });
    const app = await connectServer(dataDir);
    try {
      await askOnNewReader(agent, app, "Quarterly report", "Are the figures final?");
      // The session's own status line sees its ask: the server and the status line agree on the session.
      const ownLine = await runIn(ns, [process.execPath, CLI, "statusline"], env, STATUS_INPUT);
      assert.equal(ownLine.out, "reader: 1 question\n", ownLine.err);
    } finally {
      await agent.close();
      await app.close();
    }
    await endHost(ns, first);

    const second = await startHost(ns);
    try {
      const line = await runIn(ns, [process.execPath, CLI, "statusline"], env, STATUS_INPUT);
      assert.equal(line.out, "", `the new session's status line shows the ended session's ask: ${line.out}`);
      const hook = await runIn(ns, [process.execPath, CLI, "hook", "stop", "--timeout", "3"], env, STOP_INPUT);
      assert.doesNotMatch(hook.err, /Are the figures final|Quarterly report|from the app in this chat/, "the ended session's ask woke the new one");
      assert.equal(hook.code, 2, hook.err);
      assert.equal(hook.err.trim(), TIMEOUT_NOTE);
    } finally {
      await endHost(ns, second);
    }
  });
});

describe("two users on one Redis, each in a container whose Claude Code has the same pid", {
  skip: skip || otherUserSkipReason() || redisSkipReason(),
}, () => {
  let redis: RedisServer;
  let theirs: PidNamespace;
  let ours: PidNamespace;
  const removals: (() => Promise<void>)[] = [];
  before(async () => {
    redis = await startRedis();
    [theirs, ours] = await Promise.all([makePidNamespace(), makePidNamespace()]);
  });
  after(async () => {
    await theirs?.close();
    await ours?.close();
    await redis?.stop();
    for (const remove of removals) await remove();
  });

  test("never share a session: one user's wake hook never shows the other's ask", { timeout: 120_000 }, async () => {
    const store = redis.url(1);
    const victim = await tempDataDir();
    const other = await tempDataDir();
    removals.push(victim.cleanup, other.cleanup);
    // The other user's data directory is theirs: made as root, given to them.
    const otherHome = join(other.dir, "home");
    await mkdir(otherHome, { mode: 0o700 });
    await chown(other.dir, OTHER_USER.uid, OTHER_USER.gid);
    await chown(otherHome, OTHER_USER.uid, OTHER_USER.gid);

    const victimHost = await startHost(theirs);
    const otherHost = await startHost(ours);
    const agent = await serverIn(theirs, { BACKCHANNEL_HOME: victim.dir, BACKCHANNEL_STORE: store });
    const app = await connectServer(victim.dir, { BACKCHANNEL_STORE: store });
    try {
      await askOnNewReader(agent, app, "Confidential merger", "Should we buy Initech?");
      const victimEnv = { BACKCHANNEL_HOME: victim.dir, BACKCHANNEL_STORE: store, CLAUDE_PID: String(HOST_PID) };
      const ownLine = await runIn(theirs, [process.execPath, CLI, "statusline"], victimEnv, STATUS_INPUT);
      assert.equal(ownLine.out, "reader: 1 question\n", ownLine.err);

      const otherEnv = { BACKCHANNEL_HOME: otherHome, BACKCHANNEL_STORE: store, CLAUDE_PID: String(HOST_PID), HOME: otherHome };
      const asOther = (args: string[]) => [...AS_OTHER_USER, process.execPath, CLI, ...args];
      const line = await runIn(ours, asOther(["statusline"]), otherEnv, STATUS_INPUT);
      assert.equal(line.out, "", `the other user's status line shows the ask: ${line.out}${line.err}`);
      const hook = await runIn(ours, asOther(["hook", "stop", "--timeout", "3"]), otherEnv, STOP_INPUT);
      assert.doesNotMatch(hook.err, /Initech|Confidential merger|from the app in this chat/, "the other user's hook woke their model with the ask");
      assert.equal(hook.code, 2, hook.err);
      assert.equal(hook.err.trim(), TIMEOUT_NOTE);
    } finally {
      await agent.close();
      await app.close();
      await endHost(theirs, victimHost);
      await endHost(ours, otherHost);
    }
  });
});
