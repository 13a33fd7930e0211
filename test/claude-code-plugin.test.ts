/**
 * The plugin in the real Claude Code (the pinned version, see test/support/claude-code/),
 * loaded with `--plugin-dir <checkout>/plugin` and nothing else configured: a scripted
 * model opens the reader once and never arms or re-arms anything; an app (an SDK client
 * on the same data directory) asks several questions, one after the other. Every ask
 * is answered, each costs exactly two model requests (woken with the ask → notify_ui
 * with ack; its result → end of turn), and no request happens that no message caused.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { type ModelServer, startModelServer } from "./support/claude-code/model-server.js";
import { PLUGIN_ROOT, pluginPolicy, pluginTool as tool, sinceLastReply, waitForWatcher } from "./support/claude-code/plugin-policy.js";
import { type ClaudeSession, descendants, runPrint, startSession } from "./support/claude-code/session.js";

const skip = claudeCodeSkipReason();
/**
 * Idle seconds before each ask: none by default (3 asks). The long run of
 * docs/claude-code-plugin.md sets BACKCHANNEL_PLUGIN_GAPS_S=0,620,100,100,100: 5 asks
 * over 15 minutes of idle time, one gap past Claude Code's default hook budget (600 s).
 */
const GAPS_S = (process.env.BACKCHANNEL_PLUGIN_GAPS_S ?? "0,0,0").split(",").map(Number);
const ASKS = GAPS_S.length;
const IDLE_MS = GAPS_S.reduce((sum, gap) => sum + gap, 0) * 1000;

describe("the plugin keeps the agent reachable in Claude Code without arming anything", { skip }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let model: ModelServer;
  let session: ClaudeSession;
  let app: Client;
  let channel = "";

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    model = await startModelServer(pluginPolicy());
    session = await startSession({
      model,
      dataDir,
      configure: "none",
      args: ["--plugin-dir", PLUGIN_ROOT],
      allowedTools: ["mcp__plugin_backchannel_backchannel", "ToolSearch"],
    });
    app = await connectServer(dataDir);
  });

  after(async () => {
    await app?.close();
    await session?.stop();
    await model?.close();
    await cleanup?.();
  });

  test(`${ASKS} asks, all answered, two model requests each, none that no message caused`, { timeout: 240_000 + IDLE_MS }, async () => {
    session.send("Open the reader on my notes.");
    const opened = await model.waitForTurn((turn) => turn.result(tool("open_reader")) !== undefined, { timeoutMs: 90_000 });
    const text = opened.result(tool("open_reader"))!.text;
    channel = /"channel_id":"([\w-]+)"/.exec(text)?.[1] ?? "";
    assert.notEqual(channel, "", `open_reader named its channel: ${text}`);
    await waitForWatcher(dataDir);
    const before = model.turns().length;
    let cursor = 0;
    for (let i = 1; i <= ASKS; i++) {
      const thread = `t-${i}`;
      await new Promise((resolve) => setTimeout(resolve, GAPS_S[i - 1]! * 1000));
      await app.callTool({
        name: "notify_agent",
        arguments: {
          channel_id: channel,
          event: "ask",
          data: { thread_id: thread, quote: "The queue is the truth.", paragraph: "", question: `Question ${i}?`, history: [] },
        },
      });
      for (let answered = false; !answered; ) {
        const polled = structured<{ messages: { event: string; data: { thread_id?: string } }[]; cursor: number }>(
          await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: channel, after: cursor, wait_ms: 30_000 } }),
        );
        cursor = polled.cursor;
        answered = polled.messages.some((message) => message.event === "answer" && message.data.thread_id === thread);
      }
      // The turn that answered ends before the next ask, so that each ask's requests can be counted.
      await model.waitForTurn((turn) => turn.result(tool("notify_ui")) !== undefined, { from: before + 2 * (i - 1) });
      await waitForWatcher(dataDir);
    }
    const turns = model.turns().slice(before);
    if (IDLE_MS > 0)
      process.stderr.write(`long run: ${ASKS} asks over ${IDLE_MS / 1000} s idle, ${turns.length} model requests after the reader opened\n`);
    assert.equal(turns.length, 2 * ASKS, `requests after the reader opened: ${turns.map((turn) => sinceLastReply(turn).slice(0, 80)).join(" | ")}`);
    const store = await import("../store/file/file-store.js");
    assert.deepEqual(await new store.FileStore({ dataDir }).peek(channel, "agent"), [], "every ask was cleared by its answer's ack");
    const watchers = [];
    for (const pid of await descendants(session.child.pid!)) {
      const args = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (args.split("\0").includes("stop")) watchers.push(pid);
    }
    assert.ok(watchers.length <= 1, `${watchers.length} wake hooks running`);
  });
});

describe("a one-shot claude -p with the plugin", { skip }, () => {
  test("still asks where the person's settings say to ask: an ask rule wins over the plugin's grant", { timeout: 180_000 }, async () => {
    const { dir, cleanup } = await tempDataDir();
    const model = await startModelServer(pluginPolicy());
    try {
      await runPrint("Open the reader on my notes.", {
        model,
        dataDir: dir,
        configure: "none",
        args: ["--plugin-dir", PLUGIN_ROOT],
        allowedTools: ["ToolSearch"],
        settings: { permissions: { ask: [tool("open_reader")] } },
      });
      const opened = model
        .turns()
        .find((turn) => turn.result(tool("open_reader")) !== undefined)
        ?.result(tool("open_reader"));
      assert.ok(opened?.isError, `open_reader was asked about, and -p refused it: ${opened?.text}`);
      assert.match(opened.text, /requested permissions/);
    } finally {
      await model.close();
      await cleanup();
    }
  });

  test("runs the plugin's tools without a prompt and exits within 5 s of its last turn", { timeout: 180_000 }, async () => {
    const { dir, cleanup } = await tempDataDir();
    const model = await startModelServer(pluginPolicy());
    try {
      // No backchannel tool is allowed on the command line: the plugin's own PermissionRequest
      // hook grants them (`-p` refuses any tool that would ask).
      const run = await runPrint("Open the reader on my notes.", {
        model,
        dataDir: dir,
        configure: "none",
        args: ["--plugin-dir", PLUGIN_ROOT],
        allowedTools: ["ToolSearch"],
      });
      const turns = model.turns();
      const opened = turns.find((turn) => turn.result(tool("open_reader")) !== undefined)?.result(tool("open_reader"));
      assert.ok(opened && !opened.isError, `open_reader ran without a prompt: ${opened?.text}\n${run.stderr}`);
      assert.equal(run.code, 0, run.stderr);
      const lastTurnToExitMs = run.endedAt - turns.at(-1)!.at;
      assert.ok(lastTurnToExitMs < 5_000, `claude -p exited ${Math.round(lastTurnToExitMs)} ms after its last turn`);
    } finally {
      await model.close();
      await cleanup();
    }
  });
});
