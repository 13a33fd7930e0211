/**
 * The wake paths of the real Claude Code (the pinned version, see test/support/claude-code/)
 * that need a person at the keyboard: `open_reader`'s elicitation (the form, in `claude -p`,
 * in the long-lived stream-json session and in the interactive TUI), backchannel's status
 * line in the TUI, and `/loop`'s `ScheduleWakeup`. The TUI runs in tmux (tui.ts); keys are
 * typed with `tmux send-keys` and what a person would see is read with `capture-pane`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { CLI, connectServer, structured, tempDataDir } from "./support/helpers.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { type Action, type ModelServer, type Policy, startModelServer, type Turn } from "./support/claude-code/model-server.js";
import { hostTool } from "./support/claude-code/reader-policy.js";
import { ALLOWED_TOOLS, runPrint, type StreamEvent, startSession } from "./support/claude-code/session.js";
import { type ClaudeTui, startTui, tmuxMissing } from "./support/claude-code/tui.js";

const skip = claudeCodeSkipReason();
/** The TUI tests also need tmux. */
const noTui = skip ?? tmuxMissing();

/** The prompt on which the scripted model calls open_reader with no document. */
const OPEN = "Open the reader";

/** A model that calls open_reader with nothing on each {@link OPEN} prompt, and ends the turn on its answer. */
const askingPolicy: Policy = (turn: Turn) => {
  if (turn.result(hostTool("open_reader"))) return { text: "Noted." };
  if (turn.lastText.includes(OPEN)) return { tool: hostTool("open_reader"), input: {} };
  return undefined;
};

/** open_reader's answer as the model got it, in the first request at or after `from` that carries one. */
async function openReaderAnswer(model: ModelServer, from: number): Promise<{ text: string; isError: boolean }> {
  const turn = await model.waitForTurn((candidate) => candidate.result(hostTool("open_reader")) !== undefined, { from });
  return turn.result(hostTool("open_reader"))!;
}

/** Whether `event` is Claude Code asking its stream-json host to fill an MCP server's form. */
function isElicitation(event: StreamEvent): boolean {
  return event.type === "control_request" && (event.request as { subtype?: string } | undefined)?.subtype === "elicitation";
}

describe("Claude Code with a person at the keyboard", { skip }, () => {
  test("open_reader with no document: claude -p answers cancel; a stream-json host gets the form, and its accept, decline and cancel each reach the model", async (t) => {
    const data = await tempDataDir();
    const printModel = await startModelServer(askingPolicy);
    const model = await startModelServer(askingPolicy);
    const session = await startSession({ model, dataDir: data.dir });
    const app = await connectServer(data.dir);
    try {
      // claude -p has nobody to ask: the model hears the cancel advice and the run ends.
      const run = await runPrint(`${OPEN}.`, { model: printModel, dataDir: data.dir });
      assert.equal(run.code, 0, run.stderr);
      const printed = await openReaderAnswer(printModel, 0);
      assert.ok(printed.isError);
      assert.match(printed.text, /did not answer .*ask in the chat for the document/);

      // The stream-json session hands the form to its host as a control_request, and waits.
      const replies = [
        { action: "accept", content: { text: "# Pasted\n\nA pasted document to read." } },
        { action: "decline" },
        { action: "cancel" },
      ];
      const asked: number[] = [];
      const answers: { text: string; isError: boolean }[] = [];
      for (const [index, reply] of replies.entries()) {
        const from = session.events.length;
        const turns = model.turns().length;
        session.send(`${OPEN} (${index + 1}).`);
        const request = await session.waitForEvent(isElicitation, { from });
        const form = request.request as {
          mcp_server_name: string;
          message: string;
          mode: string;
          requested_schema: { properties: Record<string, unknown> };
        };
        assert.equal(form.mcp_server_name, "backchannel");
        assert.equal(form.mode, "form");
        assert.match(form.message, /What should the reader show\?/);
        assert.deepEqual(Object.keys(form.requested_schema.properties).sort(), ["path", "text"]);
        const sent = performance.now();
        session.respond(String(request.request_id), reply);
        answers.push(await openReaderAnswer(model, turns));
        asked.push(performance.now() - sent);
      }
      const [accepted, declined, cancelled] = answers;
      assert.ok(!accepted!.isError, accepted!.text);
      const opened = JSON.parse(accepted!.text) as { channel_id: string; title: string };
      assert.equal(opened.title, "Pasted");
      const state = structured<{ document: { text: string } }>(
        await app.callTool({ name: "reader_state", arguments: { channel_id: opened.channel_id } }),
      );
      assert.equal(state.document.text, replies[0]!.content!.text);
      assert.ok(declined!.isError);
      assert.match(declined!.text, /the user declined .*do not ask again/);
      assert.ok(cancelled!.isError);
      assert.match(cancelled!.text, /did not answer/);
      t.diagnostic(`host's answer → the model's next request: ${asked.map((ms) => `${Math.round(ms)} ms`).join(", ")} (accept, decline, cancel)`);
    } finally {
      await app.close();
      await session.stop();
      await model.close();
      await printModel.close();
      await data.cleanup();
    }
  });

  test("in the TUI the form is shown, typed keys fill and accept it (the reader opens on that text), and Esc cancels it", {
    skip: noTui,
  }, async (t) => {
    const data = await tempDataDir();
    const model = await startModelServer(askingPolicy);
    const tui = await startTui({ model, dataDir: data.dir });
    const app = await connectServer(data.dir);
    try {
      await tui.type(`${OPEN}.`);
      await tui.press("Enter");
      const asked = performance.now();
      const form = await tui.waitForScreen((screen) => screen.includes("requests your input") && screen.includes("Type something"));
      t.diagnostic(`the form, ${Math.round(performance.now() - asked)} ms after Enter:\n${formLines(form)}`);
      assert.match(form, /MCP server .backchannel. requests your input/);
      assert.match(form, /What should the reader show\? Paste the text, or give a file path\./);
      assert.match(form, /Text: Type something/);
      assert.match(form, /Or a file: not set/);
      assert.match(form, /Accept\s+Decline/);

      const pasted = "A typed document, one line.";
      await tui.type(pasted);
      await tui.waitForScreen((screen) => screen.includes(`Text: ${pasted}`));
      // Enter takes the field and moves to the next; Down reaches the buttons, Accept first.
      await tui.pressUntil("Enter", (screen) => /❯\s+Or a file/.test(screen));
      await tui.pressUntil("Down", (screen) => /❯\s*Accept/.test(screen));
      await tui.pressUntil("Enter", (screen) => !screen.includes("requests your input"));
      const accepted = await openReaderAnswer(model, 0);
      assert.ok(!accepted.isError, accepted.text);
      const { channel_id } = JSON.parse(accepted.text) as { channel_id: string };
      const state = structured<{ document: { text: string } }>(await app.callTool({ name: "reader_state", arguments: { channel_id } }));
      assert.equal(state.document.text, pasted);

      await tui.waitForScreen((screen) => !screen.includes("requests your input") && /^❯\s*$/m.test(screen));
      const turns = model.turns().length;
      await tui.type(`${OPEN} again.`);
      await tui.press("Enter");
      await tui.waitForScreen((screen) => screen.includes("requests your input"));
      await tui.pressUntil("Escape", (screen) => !screen.includes("requests your input"));
      const cancelled = await openReaderAnswer(model, turns);
      assert.ok(cancelled.isError);
      assert.match(cancelled.text, /did not answer/);
    } finally {
      await app.close();
      await tui.stop();
      await model.close();
      await data.cleanup();
    }
  });
});

/** The lines of the form on `screen`, for the diagnostic. */
function formLines(screen: string): string {
  const lines = screen.split("\n");
  const start = lines.findIndex((line) => line.includes("requests your input"));
  return lines
    .slice(start, start + 9)
    .map((line) => line.trimEnd())
    .join("\n");
}

/** The question the app asks in the status line and /loop tests. */
const ASK = { thread_id: "t1", quote: "Text", paragraph: "Text to read.", question: "Why?", history: [] };

/** Opens the reader from the TUI (the model calls open_reader with a document) and resolves with its channel. */
async function openReader(tui: ClaudeTui, model: ModelServer): Promise<string> {
  const from = model.turns().length;
  await tui.type("Show my notes in the reader.");
  await tui.press("Enter");
  const turn = await model.waitForTurn((candidate) => candidate.result(hostTool("open_reader")) !== undefined, { from });
  return (JSON.parse(turn.result(hostTool("open_reader"))!.text) as { channel_id: string }).channel_id;
}

/** The notify_ui call that answers every ask in a poll's result and acknowledges it; none when no ask is in it. */
function answerAll(channelId: string, polled: string): Action[] {
  const { messages, cursor } = JSON.parse(polled) as { messages: { event: string; data: { thread_id?: string } }[]; cursor: number };
  return messages
    .filter((message) => message.event === "ask")
    .map((message) => ({
      tool: hostTool("notify_ui"),
      input: { channel_id: channelId, event: "answer", data: { thread_id: message.data.thread_id ?? "", text: "Because." }, ack: cursor },
    }));
}

describe("Claude Code's TUI: the status line and /loop", { skip: noTui }, () => {
  test("backchannel's status line, installed by the CLI, shows the wall and a waiting question, and clears when the agent answers; no escape reaches the pane", async (t) => {
    const data = await tempDataDir();
    let channelId = "";
    const wall = "Reading \u001b[41mALERT\u001b[0m \u001b]0;pwned\u0007 notes";
    const model = await startModelServer((turn) => {
      if (turn.result(hostTool("open_reader"))) return { tool: hostTool("post_wall"), input: { text: wall, duration_s: 600 } };
      const polled = turn.result(hostTool("poll_agent_messages"));
      if (polled) return answerAll(channelId, polled.text);
      if (turn.lastText.includes("Show my notes")) return { tool: hostTool("open_reader"), input: { markdown: "# Notes\n\nText to read." } };
      if (turn.lastText.includes("Any questions?")) return { tool: hostTool("poll_agent_messages"), input: { channel_id: channelId } };
      return undefined;
    });
    const tui = await startTui({
      model,
      dataDir: data.dir,
      // As the README says: `backchannel install statusline`, here in the session's HOME.
      prepare: async (prepared) => {
        execFileSync(process.execPath, [CLI, "install", "statusline"], { env: prepared.env, encoding: "utf8" });
      },
    });
    const app = await connectServer(data.dir);
    try {
      const settings = JSON.parse(await readFile(join(tui.prepared.home, ".claude", "settings.json"), "utf8")) as {
        statusLine?: { command?: string };
      };
      assert.match(settings.statusLine?.command ?? "", / statusline --stash /);
      const statusLine = (screen: string) => screen.trimEnd().split("\n").at(-2) ?? "";
      assert.doesNotMatch(statusLine(await tui.screen()), /reader|Reading/, "a status line before anything waits");

      channelId = await openReader(tui, model);
      const walled = await tui.waitForScreen((screen) => /Reading ALERT notes \(until \d\d:\d\d\)/.test(statusLine(screen)));
      t.diagnostic(`status line with the wall: ${statusLine(walled).trim()}`);
      const coloured = await tui.screen({ escapes: true });
      assert.ok(!coloured.includes("\u001b[41m"), "the wall's SGR reached the pane");
      assert.notEqual(await tui.title(), "pwned", "the wall's OSC 0 set the pane's title");

      const turns = model.turns().length;
      await app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data: ASK } });
      const asked = performance.now();
      const waiting = await tui.waitForScreen((screen) => statusLine(screen).includes("reader: 1 question · Reading ALERT notes"));
      const shownMs = performance.now() - asked;
      t.diagnostic(`status line ${Math.round(shownMs)} ms after the ask: ${statusLine(waiting).trim()}`);
      assert.equal(model.turns().length, turns, "the status line gave the model a turn");

      await tui.type("Any questions?");
      await tui.press("Enter");
      const typed = performance.now();
      await model.waitForTurn((turn) => turn.result(hostTool("notify_ui")) !== undefined, { from: turns });
      const cleared = await tui.waitForScreen(
        (screen) => !statusLine(screen).includes("question") && statusLine(screen).includes("Reading ALERT notes"),
      );
      t.diagnostic(`status line ${Math.round(performance.now() - typed)} ms after the user's turn began: ${statusLine(cleared).trim()}`);
    } finally {
      await app.close();
      await tui.stop();
      await model.close();
      await data.cleanup();
    }
  });

  test("/loop in dynamic mode: ScheduleWakeup gives the idle TUI a turn, in which a model polling backchannel answers an ask (slow: about 2 minutes)", async (t) => {
    const data = await tempDataDir();
    let channelId = "";
    const loopPrompt = "answer the reader's questions";
    const model = await startModelServer((turn) => {
      const polled = turn.result(hostTool("poll_agent_messages"));
      if (polled) {
        const answers = answerAll(channelId, polled.text);
        if (answers.length > 0) return answers;
        // Nothing yet: come back in a minute (the least ScheduleWakeup takes), with the same prompt.
        return { tool: "ScheduleWakeup", input: { delaySeconds: 60, reason: "poll backchannel", prompt: `/loop ${loopPrompt}` } };
      }
      if (turn.lastText.includes("<command-name>/loop</command-name>"))
        return { tool: hostTool("poll_agent_messages"), input: { channel_id: channelId } };
      if (turn.result(hostTool("open_reader"))) return { text: "The reader is open." };
      if (turn.lastText.includes("Show my notes")) return { tool: hostTool("open_reader"), input: { markdown: "# Notes\n\nText to read." } };
      return undefined;
    });
    const tui = await startTui({ model, dataDir: data.dir, allowedTools: [...ALLOWED_TOOLS, "ScheduleWakeup"] });
    const app = await connectServer(data.dir);
    try {
      channelId = await openReader(tui, model);
      await tui.waitForScreen((screen) => screen.includes("The reader is open."));
      const looped = model.turns().length;
      await tui.type(`/loop ${loopPrompt}`);
      await tui.press("Enter");
      const first = await model.waitForTurn((turn) => turn.lastText.includes("<command-name>/loop</command-name>"), { from: looped });
      assert.match(first.lastText, /Dynamic mode/, "/loop without an interval is not the self-paced mode");
      const scheduled = await model.waitForTurn((turn) => turn.result("ScheduleWakeup") !== undefined, { from: looped });
      const said = scheduled.result("ScheduleWakeup")!;
      assert.ok(!said.isError, said.text);
      const delay = /in (\d+)s\)/.exec(said.text);
      assert.ok(delay, `ScheduleWakeup's answer names no delay: ${said.text}`);
      t.diagnostic(`ScheduleWakeup 60 s → ${said.text.split(".")[0]}`);
      const idleFrom = model.turns().length;

      await app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data: ASK } });
      const asked = performance.now();
      const woken = await model.waitForTurn((turn) => turn.lastText.includes("<command-name>/loop</command-name>"), {
        from: idleFrom,
        timeoutMs: (Number(delay[1]) + 60) * 1000,
      });
      const wokeMs = woken.at - asked;
      const idle = model.turns().slice(idleFrom, woken.index);
      assert.deepEqual(
        idle.map((turn) => turn.lastText.slice(0, 80)),
        [],
        "requests while the loop slept",
      );
      const answered = await model.waitForTurn((turn) => turn.result(hostTool("notify_ui")) !== undefined, { from: woken.index });
      assert.ok(!answered.result(hostTool("notify_ui"))!.isError);
      const polled = structured<{ messages: { event: string; data: { thread_id: string } }[] }>(
        await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: channelId } }),
      );
      assert.ok(
        polled.messages.some((message) => message.event === "answer" && message.data.thread_id === ASK.thread_id),
        "the app got no answer",
      );
      const perAsk = model.turns().length - woken.index;
      t.diagnostic(
        `wake ${Math.round((woken.at - scheduled.at) / 1000)} s after ScheduleWakeup (it said ${delay[1]} s), ${Math.round(wokeMs / 1000)} s after the ask; ` +
          `0 requests while idle; ${perAsk} requests from the wake to the end of its turn`,
      );
    } finally {
      await app.close();
      await tui.stop();
      await model.close();
      await data.cleanup();
    }
  });
});
