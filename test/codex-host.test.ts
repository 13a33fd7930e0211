/**
 * backchannel in the real Codex CLI (pinned: test/support/codex/), installed in one step
 * as the README says (`backchannel install codex`), the interactive TUI in tmux against a
 * scripted model that arms nothing (test/support/host-turn.ts `wakePolicy`). What the
 * model is shown, then the whole reader loop: an app on the same data directory asks
 * five questions, follow-ups included, one of them after five idle minutes; each is
 * answered in two model requests (the queued wake → notify_ui with ack; its result →
 * end of turn), and no request comes that no message caused.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { type CodexModel, CODEX_NAMESPACE, startCodexModel } from "./support/codex/model-server.js";
import { type CodexTui, codexSkipReason, startCodexTui } from "./support/codex/session.js";
import { connectServer, tempDataDir } from "./support/helpers.js";
import { AskingApp, checkFiveAsks, idleGaps, instructionsAsInstalled } from "./support/host-loop.js";
import { wakePolicy } from "./support/host-turn.js";
import { processesMarked } from "./support/leftovers.js";
import { tmuxMissing } from "./support/tmux-pane.js";

const skip = codexSkipReason() ?? tmuxMissing("Codex CLI");
const GAPS_S = idleGaps();

describe("backchannel in Codex CLI, installed with backchannel install codex", { skip }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let model: CodexModel;
  let tui: CodexTui;
  let app: Client;
  let channel = "";

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    model = await startCodexModel(wakePolicy());
    tui = await startCodexTui({ model, dataDir });
    app = await connectServer(dataDir);
  });

  after(async () => {
    await app?.close();
    await tui?.stop();
    await model?.close();
    await cleanup?.();
  });

  test("the model gets the instructions as its tool namespace's description (arm nothing; a link for the person), no app-only tool, and results as structuredContent with the reader's link", {
    timeout: 180_000,
  }, async () => {
    assert.match(tui.prepared.installed ?? "", /added the wake hook.*Codex now trusts it.*added the MCP server "backchannel"/s);
    await tui.submit("Open the reader on my notes.");
    const first = await model.waitForTurn((turn) => turn.index === 0, { timeoutMs: 90_000 });
    const namespace = first.namespace;
    assert.ok(namespace, `backchannel's tools reach the model as the namespace ${CODEX_NAMESPACE}: ${first.toolNames.join(", ")}`);
    assert.equal(
      namespace.description,
      await instructionsAsInstalled(dataDir),
      "the server's instructions, word for word, as the namespace's description",
    );
    assert.match(
      namespace.description ?? "",
      /Arm nothing: backchannel's wake hook wakes you/,
      "the install step's server tells the model to arm nothing",
    );
    assert.doesNotMatch(namespace.description ?? "", /background|watch_command/, "nor to run a watcher");
    assert.match(namespace.description ?? "", /reader_url/, "Codex shows no apps: the model is told the reader opens from a link");
    assert.ok(!first.transcript.includes("MCP Server Instructions"), "not in the prompt as well");
    const listed = (await app.listTools()).tools;
    const appOnly = listed.filter((tool) => JSON.stringify(tool._meta ?? {}).includes('"visibility":["app"]')).map((tool) => tool.name);
    assert.ok(appOnly.length > 0, "the server has app-only tools");
    const given = (namespace.tools ?? []).map((tool) => tool.name);
    for (const name of appOnly) assert.ok(!given.includes(name), `app-only ${name} is not given to the model (${given.join(", ")})`);
    assert.ok(given.includes("notify_ui") && given.includes("open_reader"), given.join(", "));
    const opened = await model.waitForTurn((turn) => turn.backchannelResult("open_reader") !== undefined, { timeoutMs: 90_000 });
    const output = opened.backchannelResult("open_reader")!;
    const json = JSON.parse(output.slice(output.indexOf("{"))) as { channel_id: string; reader_url?: string; watch_command?: string };
    assert.match(output, /^Wall time: [\d.]+ seconds\nOutput:\n\{/, "Codex shows the model the structured result as JSON");
    assert.ok(!output.includes("Opened "), "and not the text content (the summary line)");
    assert.match(
      json.reader_url ?? "",
      new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?k=[\\w-]+#${json.channel_id}$`),
      "the reader's link, for the person",
    );
    assert.equal(json.watch_command, undefined, "no watcher to run");
    channel = json.channel_id;
    process.stderr.write(
      `codex: backchannel's namespace is ${JSON.stringify(namespace).length} characters (instructions ${namespace.description?.length})\n`,
    );
  });

  test(`five asks, follow-ups included, one after ${GAPS_S[2]} s idle: each answered in two model requests, none that no message caused`, {
    timeout: 300_000 + GAPS_S.reduce((a, b) => a + b, 0) * 1000,
  }, async () => {
    assert.notEqual(channel, "", "the reader is open");
    await checkFiveAsks("codex", new AskingApp(app, channel), model);
    const store = await import("../store/file/file-store.js");
    assert.deepEqual(
      await new store.FileStore({ dataDir }).peek(channel, "agent"),
      [],
      "every ask was cleared by its answer's ack (ready does not wait either)",
    );
    const wakers = await processesMarked(dataDir, "codex-wake");
    assert.ok(wakers.length <= 1, `${wakers.length} wakers running`);
  });
});
