/**
 * backchannel in the real Gemini CLI (pinned: test/support/gemini/), installed in one
 * step as the README says (`gemini extensions link <checkout>/gemini-extension
 * --consent`), headless (`gemini -p … -o stream-json`) against a scripted model that
 * arms nothing (test/support/host-turn.ts `wakePolicy`). What the model is shown, then
 * the whole reader loop: an app on the same data directory asks five questions,
 * follow-ups included, one of them after five idle minutes; each is answered in two
 * model requests (the hook's block → notify_ui with ack; its result → end of turn), no
 * request comes that no message caused, and no router or other side call either.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, tempDataDir } from "./support/helpers.js";
import { type GeminiModel, geminiTool, isRouterCall, startGeminiModel } from "./support/gemini/model-server.js";
import { type GeminiRun, geminiSkipReason, runGemini } from "./support/gemini/session.js";
import { AskingApp, checkFiveAsks, idleGaps, instructionsAsInstalled } from "./support/host-loop.js";
import { wakePolicy } from "./support/host-turn.js";

const skip = geminiSkipReason();
const GAPS_S = idleGaps();

describe("backchannel in Gemini CLI, installed as an extension", { skip }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let model: GeminiModel;
  let run: GeminiRun;
  let app: Client;
  let channel = "";
  let appOnly: string[] = [];

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    model = await startGeminiModel(wakePolicy());
    app = await connectServer(dataDir);
    const listed = (await app.listTools()).tools;
    appOnly = listed.filter((tool) => JSON.stringify(tool._meta ?? {}).includes('"visibility":["app"]')).map((tool) => tool.name);
    run = await runGemini("Open the reader on my notes.", { model, dataDir });
  });

  after(async () => {
    await app?.close();
    await run?.stop();
    await model?.close();
    await cleanup?.();
  });

  test("the model gets backchannel's tools and instructions, and a result's text", { timeout: 180_000 }, async () => {
    assert.match(run.prepared.installed ?? "", /Extension "backchannel" linked successfully/);
    const first = await model.waitForTurn((turn) => turn.index === 0, { timeoutMs: 90_000 });
    for (const name of ["open_reader", "notify_ui", "poll_agent_messages", "read_recipe"])
      assert.ok(first.toolNames.includes(geminiTool(name)), `${geminiTool(name)} is given to the model: ${first.toolNames.join(", ")}`);
    const instructions = await instructionsAsInstalled(dataDir);
    assert.ok(instructions.length > 0 && first.transcript.includes(instructions), "the server's instructions reach the model, word for word");
    assert.match(instructions, /Arm nothing: backchannel's wake hook wakes you/, "the extension's server tells the model to arm nothing");
    assert.match(instructions, /reader_url/, "Gemini CLI shows no apps: the model is told the reader opens from a link");
    const opened = await model.waitForTurn((turn) => turn.backchannelResult("open_reader") !== undefined, { timeoutMs: 90_000 });
    const output = opened.backchannelResult("open_reader")!;
    assert.match(output, /^<untrusted_context>\nOpened "Host notes"/, "Gemini CLI shows the model the text content, wrapped as untrusted");
    assert.ok(!output.includes('"watch_command":'), "and not structuredContent");
    assert.match(
      output,
      /Give the person the link below: it opens the reader in their browser\. .* The link: http:\/\/127\.0\.0\.1:\d+\/\?k=[\w-]+#ch-/,
      "the reader's link, for the person",
    );
    assert.doesNotMatch(output, /in the background/, "no watcher to run");
    channel = /on channel (ch-[\w-]+)/.exec(output)?.[1] ?? "";
    assert.notEqual(channel, "", output);
    const shown = first.declarations
      .filter((declaration) => declaration.name.startsWith(geminiTool("")))
      .map((declaration) => JSON.stringify(declaration));
    process.stderr.write(`gemini: backchannel's ${shown.length} declarations are ${shown.join("").length} characters\n`);
  });

  test("no app-only tool reaches the model", () => {
    const first = model.turns()[0];
    assert.ok(first, "a first request came");
    // Gemini CLI does not honour `visibility`: the server offers app-only tools only to a
    // client that declares the MCP Apps ui extension, which Gemini CLI does not.
    assert.deepEqual(
      appOnly.filter((name) => first.toolNames.includes(geminiTool(name))),
      [],
      "app-only tools given to the model",
    );
  });

  test(`five asks, follow-ups included, one after ${GAPS_S[2]} s idle: each answered in two model requests, none that no message caused`, {
    timeout: 300_000 + GAPS_S.reduce((a, b) => a + b, 0) * 1000,
  }, async () => {
    assert.notEqual(channel, "", "the reader is open");
    const sideCallsBefore = model.requests.filter((request) => !request.main).length;
    await checkFiveAsks("gemini", new AskingApp(app, channel), model);
    const sideCalls = model.requests.filter((request) => !request.main).slice(sideCallsBefore);
    assert.deepEqual(
      sideCalls.map((request) => `${request.url}${isRouterCall(request.url, request.body) ? " (router)" : ""}`),
      [],
      "no router, title or other side call for a wake",
    );
    assert.ok(!run.exited(), "the headless run is still there, waiting for the next message");
    const store = await import("../store/file/file-store.js");
    assert.deepEqual(await new store.FileStore({ dataDir }).peek(channel, "agent"), [], "every ask was cleared by its answer's ack");
  });
});
