/**
 * The Gemini CLI extension in the interactive TUI (the real Gemini CLI in a tmux pane, as
 * a person runs it), where the wake hook's wait is visible: while a reader is open the
 * end of each turn shows "Executing Hook … (esc to cancel)", an app's ask is answered in
 * two model requests, what the person types meanwhile is queued, and Esc gives the
 * session back at once: the typed message goes to the model, and after that turn the
 * hook waits again (the cancelled one, which Gemini leaves running, is ended by the new
 * one's claim).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { type GeminiModel, startGeminiModel } from "./support/gemini/model-server.js";
import { type GeminiHome, geminiSkipReason, prepareGemini } from "./support/gemini/session.js";
import { connectServer, tempDataDir } from "./support/helpers.js";
import { AskingApp } from "./support/host-loop.js";
import { wakePolicy } from "./support/host-turn.js";
import { processesMarked } from "./support/leftovers.js";
import { type Pane, startPane, tmuxMissing } from "./support/tmux-pane.js";

const skip = geminiSkipReason() ?? tmuxMissing("Gemini CLI");

describe("the Gemini CLI extension in the TUI", { skip }, () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let model: GeminiModel;
  let prepared: GeminiHome;
  let pane: Pane;
  let app: Client;

  before(async () => {
    data = await tempDataDir();
    model = await startGeminiModel(wakePolicy());
    prepared = await prepareGemini({ model, dataDir: data.dir });
    pane = await startPane({
      socket: join(prepared.root, "tmux.sock"),
      cwd: prepared.cwd,
      env: prepared.env,
      command: ["gemini", "--yolo", "--skip-trust"],
      columns: 160,
      rows: 50,
    });
    app = await connectServer(data.dir);
  });

  after(async () => {
    await app?.close();
    await pane?.stop();
    await prepared?.cleanup();
    await model?.close();
    await data?.cleanup();
  });

  /**
   * Types `text` at the prompt, then presses Enter until the TUI shows it sent (`> text`)
   * or queued: an Enter typed with the text reads as part of a paste, and one pressed
   * while Gemini CLI is still starting is dropped.
   */
  async function submit(text: string): Promise<void> {
    await pane.type(text);
    await pane.pressUntil("Enter", (screen) => screen.includes(`> ${text}`) || screen.includes("Queued"));
  }

  /** The AfterAgent hooks of this session still running. */
  function hooks(): Promise<number[]> {
    return processesMarked(prepared.root, "hook", "after-agent");
  }

  test("the hook's wait shows, an ask is answered in two requests, Esc gives the prompt back and the hook waits again", {
    timeout: 300_000,
  }, async () => {
    // Ready once backchannel's server is connected ("1 MCP server" in the footer).
    await pane.waitForScreen((screen) => screen.includes("Type your message") && screen.includes("1 MCP server"), { timeoutMs: 90_000 });
    await submit("Open the reader on my notes.");
    const opened = await model.waitForTurn((turn) => turn.backchannelResult("open_reader") !== undefined, { timeoutMs: 90_000 });
    const channel = /on channel (ch-[\w-]+)/.exec(opened.backchannelResult("open_reader")!)?.[1] ?? "";
    assert.notEqual(channel, "");
    await pane.waitForScreen((screen) => /Executing Hook.*esc to cancel/.test(screen), { timeoutMs: 60_000 });

    const asking = new AskingApp(app, channel);
    const before = model.turns().length;
    const first = await asking.ask({ thread: "t-1", question: "Why is the queue the truth?", history: [] });
    assert.match(first.text, / to t-1$/);
    await model.waitForTurn((turn) => turn.backchannelResult("notify_ui") !== undefined, { from: before, timeoutMs: 60_000 });
    await pane.waitForScreen((screen) => /Executing Hook.*esc to cancel/.test(screen) && screen.includes("Agent execution blocked"), {
      timeoutMs: 60_000,
    });
    assert.equal(model.turns().length - before, 2, "the ask took two model requests");

    // The person types while the hook waits: queued; Esc cancels the wait and the message goes.
    await submit("Also, summarise the notes.");
    await pane.waitForScreen((screen) => screen.includes("Queued"), { timeoutMs: 30_000 });
    const typed = model.turns().length;
    await pane.press("Escape");
    await model.waitForTurn((turn) => turn.sinceLastReply.includes("Also, summarise the notes."), { from: typed, timeoutMs: 60_000 });
    await pane.waitForScreen((screen) => screen.includes("Request cancelled") && /Executing Hook.*esc to cancel/.test(screen), { timeoutMs: 60_000 });

    // The new turn's hook took over: the next ask is answered once, in two requests.
    const again = model.turns().length;
    const second = await asking.ask({ thread: "t-2", question: "What wakes the agent?", history: [] });
    assert.match(second.text, / to t-2$/);
    await model.waitForTurn((turn) => turn.backchannelResult("notify_ui") !== undefined, { from: again, timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(model.turns().length - again, 2, "the next ask took two model requests, and nothing came after");
    assert.ok((await hooks()).length <= 1, "one hook waits, the cancelled one ended");
  });
});
