/**
 * The plugin in the real Claude Code (the pinned version, see test/support/claude-code/),
 * loaded with `--plugin-dir <checkout>/plugin` and nothing else configured: a scripted
 * model opens the reader once and never arms or re-arms anything; an app (an SDK client
 * on the same data directory) asks several questions, one after the other. Every ask
 * is answered, each costs exactly two model requests (woken with the ask → notify_ui
 * with ack; its result → end of turn), and no request happens that no message caused.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { type ModelServer, startModelServer, textOf, type Turn } from "./support/claude-code/model-server.js";
import { type ClaudeSession, descendants, startSession } from "./support/claude-code/session.js";

const skip = claudeCodeSkipReason();
const PLUGIN_ROOT = fileURLToPath(new URL("../../plugin", import.meta.url));
/**
 * Idle seconds before each ask: none by default (3 asks). The long run of
 * docs/claude-code-plugin.md sets BACKCHANNEL_PLUGIN_GAPS_S=0,620,100,100,100: 5 asks
 * over 15 minutes of idle time, one gap past Claude Code's default hook budget (600 s).
 */
const GAPS_S = (process.env.BACKCHANNEL_PLUGIN_GAPS_S ?? "0,0,0").split(",").map(Number);
const ASKS = GAPS_S.length;
const IDLE_MS = GAPS_S.reduce((sum, gap) => sum + gap, 0) * 1000;

/** Claude Code's name for a tool of the plugin's server. */
const tool = (name: string) => `mcp__plugin_backchannel_backchannel__${name}`;

/** The text Claude Code added since the model last spoke (a prompt, tool results, a hook's reminder). */
function sinceLastReply(turn: Turn): string {
  const messages = turn.request.messages;
  const lastReply = messages.findLastIndex((message) => message.role === "assistant");
  return messages
    .slice(lastReply + 1)
    .map((message) => textOf(message.content))
    .join("\n");
}

/** The call the wake's summary names, when this turn is a wake. */
function answerFromWake(text: string): { channel: string; thread: string; ack: number } | undefined {
  const match = /"channel_id":"([^"]+)","event":"answer","data":\{"thread_id":"([^"]+)","text":"…"\},"ack":(\d+)/.exec(text);
  return match ? { channel: match[1]!, thread: match[2]!, ack: Number(match[3]) } : undefined;
}

describe("the plugin keeps the agent reachable in Claude Code without arming anything", { skip }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let model: ModelServer;
  let session: ClaudeSession;
  let app: Client;
  let channel = "";

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    model = await startModelServer((turn) => {
      if (turn.result(tool("open_reader"))) return { text: "The reader is open." };
      if (turn.result(tool("notify_ui"))) return { text: "Answered." };
      const wake = answerFromWake(sinceLastReply(turn));
      if (wake) {
        return {
          tool: tool("notify_ui"),
          input: { channel_id: wake.channel, event: "answer", data: { thread_id: wake.thread, text: `Answer to ${wake.thread}` }, ack: wake.ack },
        };
      }
      if (turn.index === 0) return { tool: tool("open_reader"), input: { title: "Plugin notes", markdown: "# Notes\n\nThe queue is the truth." } };
      return { text: "Nothing to do." };
    });
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

/** Resolves once a session watcher holds a claim in `dataDir` (the Stop hook runs and is subscribed). */
async function waitForWatcher(dataDir: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const folder = join(dataDir, "watchers");
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names.filter((entry) => entry.endsWith(".json"))) {
      const claim = JSON.parse(await readFile(join(folder, name), "utf8").catch(() => "{}")) as { pid?: number };
      if ((claim.pid ?? 0) > 0) return;
    }
    if (Date.now() > deadline) throw new Error("no wake hook claimed the session within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
