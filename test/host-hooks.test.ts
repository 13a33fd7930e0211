/**
 * The wake hooks of Codex CLI and Gemini CLI as real processes, without the hosts (their
 * own tests run them inside the real CLIs): the hooks and the agent's server are children
 * of this process, so they share its session, as a host's hooks and MCP servers share the
 * host's. Rules: they never fail a turn, wake only for mail, once per message, and a
 * waker whose wake fails does not try again for the same messages (no loop).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { TIMEOUT_NOTE } from "../claude-code/stop-hook.js";
import { wakerLogFile } from "../codex/wake.js";
import { CLI, connectServer, structured, tempDataDir, waitUntil } from "./support/helpers.js";
import { processesMarked } from "./support/leftovers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
let agent: Client;
let app: Client;
let channel: string;
let key: string;

/** Runs `backchannel hook <args>` with `input` on stdin to its end. */
function hook(args: string[], input: string, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "hook", ...args], { env: { ...process.env, BACKCHANNEL_HOME: dataDir } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => reject(new Error(`hook ${args.join(" ")} ran over ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.end(input);
  });
}

/** The app asks `question` as the reader does. */
async function ask(thread: string, question: string): Promise<void> {
  await app.callTool({
    name: "notify_agent",
    arguments: { channel_id: channel, event: "ask", data: { thread_id: thread, quote: "q", paragraph: "p", question, history: [] } },
  });
}

const afterAgentInput = JSON.stringify({
  session_id: "9f1c",
  hook_event_name: "AfterAgent",
  prompt: "hi",
  prompt_response: "ok",
  stop_hook_active: false,
});

before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  agent = await connectServer(dataDir);
  app = await connectServer(dataDir);
});

after(async () => {
  await agent?.close();
  await app?.close();
  for (const pid of await processesMarked(dataDir)) process.kill(pid, "SIGTERM");
  await cleanup();
});

describe("Gemini CLI's hook (after-agent)", () => {
  test("input that is not Gemini's AfterAgent: {} and exit 0, at once", async () => {
    for (const input of ["not json", '{"hook_event_name":"BeforeAgent"}', "[]"]) {
      const run = await hook(["after-agent"], input);
      assert.equal(run.code, 0);
      assert.equal(run.stdout, "{}\n");
      assert.match(run.stderr, /not watching/);
    }
  });

  test("a session with no channel open is not held: {} at once", async () => {
    const run = await hook(["after-agent"], afterAgentInput);
    assert.equal(run.stdout, "{}\n");
    assert.match(run.stderr, /no channel is open in this session/);
    assert.ok(run.ms < 10_000, `${run.ms} ms`);
  });

  test("with a channel open it waits for mail and answers block with the ask; once per message; before its timeout it asks only to end the turn", {
    timeout: 60_000,
  }, async () => {
    channel = structured<{ channel_id: string }>(
      await agent.callTool({ name: "open_reader", arguments: { title: "Hook notes", markdown: "# Notes\n\nText." } }),
    ).channel_id;
    key = (await readdir(join(dataDir, "sessions"))).map((name) => name.replace(/\.json$/, ""))[0] ?? "";
    assert.ok(key, "the server recorded its session");
    const waiting = hook(["after-agent"], afterAgentInput);
    await claimedBy(dataDir);
    await app.callTool({ name: "notify_agent", arguments: { channel_id: channel, event: "ready", data: {} } });
    await ask("t-1", "Why?");
    const woken = await waiting;
    assert.equal(woken.code, 0);
    const output = JSON.parse(woken.stdout) as { decision: string; reason: string };
    assert.equal(output.decision, "block");
    assert.match(output.reason, /^backchannel: 1 message from the app in this chat\./);
    assert.match(output.reason, /"thread_id":"t-1","text":"…"\},"ack":2/);
    // The same message does not wake again: the next hook waits, and past its timeout asks only for the end of the turn.
    const again = await hook(["after-agent", "--timeout", "1"], afterAgentInput);
    assert.deepEqual(JSON.parse(again.stdout), { decision: "block", reason: TIMEOUT_NOTE });
  });
});

describe("Codex CLI's hook (codex-stop) and its waker", () => {
  test("input that is not Codex's Stop: {} and exit 0 at once, no waker", async () => {
    for (const input of ["not json", '{"hook_event_name":"PreToolUse","session_id":"x"}', '{"hook_event_name":"Stop"}']) {
      const run = await hook(["codex-stop"], input);
      assert.equal(run.code, 0);
      assert.equal(run.stdout, "{}\n");
      assert.match(run.stderr, /not woken until the next turn ends/);
    }
    assert.deepEqual(await wakers(), []);
  });

  test("a waker given a --session that is no session key refuses it at once, before any path is made of it", async () => {
    const run = await hook(["codex-wake", "--thread", "thread-1", "--session", "../../elsewhere", "--host-pid", String(process.pid)], "");
    assert.equal(run.code, 0);
    assert.match(run.stderr, /--session takes a session key/);
    assert.deepEqual(await wakers(), []);
  });

  test("the hook returns at once; a waker whose wake fails tries once per new message, never again for the same", { timeout: 60_000 }, async () => {
    assert.ok(key, "the session has a channel (the test before opened it)");
    const stop = await hook(["codex-stop"], JSON.stringify({ session_id: "thread-1", hook_event_name: "Stop", stop_hook_active: false }));
    assert.equal(stop.stdout, "{}\n");
    assert.ok(stop.ms < 10_000, `the Stop hook held the turn ${stop.ms} ms`);
    const [waker] = await waitUntil(async () => {
      const found = await wakers();
      return found.length === 1 && found;
    }, "one waker running");
    // This process stands for Codex: `<node> queue …` is no Codex, so every wake fails.
    await claimedBy(dataDir, waker);
    const log = wakerLogFile(dataDir, key);
    await ask("t-2", "Another?");
    await waitUntil(async () => (await failures(log)).length === 1, "the first failed wake logged");
    await ask("t-3", "And another?");
    await waitUntil(async () => (await failures(log)).length === 2, "the second failed wake logged");
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal((await failures(log)).length, 2, `one try per message: ${await readFile(log, "utf8")}`);
    assert.deepEqual(await wakers(), [waker], "the waker watches on");
    // A newer hook's waker takes over and ends this one.
    await hook(["codex-stop"], JSON.stringify({ session_id: "thread-1", hook_event_name: "Stop" }));
    const [newer] = await waitUntil(async () => {
      const found = await wakers();
      return found.length === 1 && found[0] !== waker && found;
    }, "the newer waker alone");
    await claimedBy(dataDir, newer);
    process.kill(newer!, "SIGTERM");
  });
});

/** The waker processes of this test's data directory. */
function wakers(): Promise<number[]> {
  return processesMarked(dataDir, "codex-wake");
}

/** The waker's failed wakes, one log line each. */
async function failures(log: string): Promise<string[]> {
  return (await readFile(log, "utf8").catch(() => "")).split("\n").filter((line) => line.includes("could not wake thread thread-1"));
}

/** Resolves once the session's claim names a live watcher (`pid`, when given). */
async function claimedBy(dir: string, pid?: number): Promise<void> {
  await waitUntil(
    async () => {
      const names = await readdir(join(dir, "watchers")).catch(() => [] as string[]);
      const claims = await Promise.all(
        names.filter((name) => name.endsWith(".json")).map((name) => readFile(join(dir, "watchers", name), "utf8").catch(() => "{}")),
      );
      const pids = claims.map((text) => (JSON.parse(text) as { pid?: number }).pid ?? 0);
      return pids.some((found) => (pid === undefined ? found > 0 : found === pid));
    },
    `the session claimed by ${pid ?? "a watcher"}`,
  );
}
