/**
 * Why Codex CLI needs `backchannel install codex`: with only the MCP server
 * (`codex mcp add`), a model that follows backchannel's instructions runs the watcher as
 * a background command, and its exit gives the idle session no turn. The watcher sees the
 * app's ask and exits; no model request follows.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { type CodexModel, startCodexModel } from "./support/codex/model-server.js";
import { type CodexTui, codexSkipReason, startCodexTui } from "./support/codex/session.js";
import { connectServer, tempDataDir, waitUntil } from "./support/helpers.js";
import type { HostPolicy } from "./support/host-turn.js";
import { processesMarked } from "./support/leftovers.js";
import { tmuxMissing } from "./support/tmux-pane.js";

const skip = codexSkipReason() ?? tmuxMissing("Codex CLI");

describe("Codex CLI with only the MCP server: the watcher's exit wakes nothing", { skip }, () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let model: CodexModel;
  let tui: CodexTui;
  let app: Client;
  let channel = "";
  let running = "";

  /** The instructions' loop: open the reader, run watch_command in the background (exec_command returns while it runs). */
  const policy: HostPolicy = (turn) => {
    const opened = turn.backchannelResult("open_reader");
    if (opened !== undefined) {
      const result = JSON.parse(opened.slice(opened.indexOf("{"))) as { channel_id: string; watch_command: string };
      channel = result.channel_id;
      return { tool: "exec_command", input: { cmd: result.watch_command, yield_time_ms: 1_000 } };
    }
    const watching = turn.toolResult("exec_command");
    if (watching !== undefined) {
      running = watching;
      return { text: "Watching for the reader." };
    }
    if (turn.index === 0) return { backchannel: "open_reader", input: { title: "Watched notes", markdown: "# Notes\n\nText." } };
    return { text: "Woken." };
  };

  before(async () => {
    data = await tempDataDir();
    model = await startCodexModel(policy);
    tui = await startCodexTui({ model, dataDir: data.dir, install: "mcp-add" });
    app = await connectServer(data.dir);
  });

  after(async () => {
    await app?.close();
    await tui?.stop();
    await model?.close();
    await data?.cleanup();
  });

  /** The watcher processes (`backchannel watch <channel>`) still running. */
  function watchers(): Promise<number[]> {
    return processesMarked(data.dir, "watch", channel);
  }

  test("the watcher runs in the background, exits on the ask, and no model request follows", { timeout: 180_000 }, async () => {
    await tui.submit("Open the reader on my notes.");
    await model.waitForTurn((turn) => turn.toolResult("exec_command") !== undefined, { timeoutMs: 90_000 });
    assert.match(running, /Process running with session ID/i, `the watcher runs on in the background: ${running.slice(0, 300)}`);
    assert.ok((await watchers()).length > 0, "the watcher process runs");
    const before = model.turns().length;
    await app.callTool({
      name: "notify_agent",
      arguments: {
        channel_id: channel,
        event: "ask",
        data: { thread_id: "t-1", quote: "q", paragraph: "p", question: "Anyone there?", history: [] },
      },
    });
    await waitUntil(async () => (await watchers()).length === 0, "the watcher saw the ask and exited", { timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    assert.equal(model.turns().length, before, "no model request in the 10 s after the watcher's exit");
  });
});
