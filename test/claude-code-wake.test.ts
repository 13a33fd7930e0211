/**
 * The other ways backchannel reaches the model in the real Claude Code (the pinned
 * version, see test/support/claude-code/), beside the watcher loops of
 * claude-code-loop.test.ts: Monitor's deadline in `claude -p`, the PostToolUse hook the
 * README gives, and the tool-description notify (`tools/list_changed`). Each test pins
 * what this Claude Code does, so that docs/hosts.md can cite it and a new version that
 * behaves otherwise fails here first.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { CLI, connectServer, tempDataDir, waitUntil } from "./support/helpers.js";
import { threadId } from "./support/simulated-app.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { startModelServer } from "./support/claude-code/model-server.js";
import { hostTool, monitorCall } from "./support/claude-code/reader-policy.js";
import { runReaderLoop } from "./support/claude-code/reader-run.js";
import { runPrint, startSession } from "./support/claude-code/session.js";
import { readRecipe } from "./support/scripted-agent.js";

const skip = claudeCodeSkipReason();

/** The checkout's page on waking the agent (linked from the README), for the hook settings it tells users to write. */
const README = fileURLToPath(new URL("../../docs/waking.md", import.meta.url));

describe("wake paths in Claude Code", { skip }, () => {
  test("claude -p grants Monitor the deadline the background-watcher recipe says it does", async (t) => {
    const data = await tempDataDir();
    try {
      const client = await connectServer(data.dir);
      const recipe = await readRecipe(client, "background-watcher");
      await client.close();
      const written = /at most (\d+) minutes \((\d+) in `claude -p`\)/.exec(recipe);
      assert.ok(written, "the recipe says no deadline for Monitor in claude -p");
      const monitor = monitorCall(recipe, "margin");
      // The watcher itself gives up after a second, so that claude -p, which waits for its monitors, ends.
      monitor.input.command = String(monitor.input.command).replace(/--timeout \d+/, "--timeout 1");
      const model = await startModelServer((turn) => (turn.index === 0 ? monitor : { text: "ok" }));
      try {
        const run = await runPrint("Watch the margin channel.", { model, dataDir: data.dir });
        assert.equal(run.code, 0, run.stderr);
        const answer = model
          .turns()
          .flatMap((turn) => turn.results)
          .find((result) => result.name === "Monitor");
        t.diagnostic(`Monitor ${JSON.stringify(monitor.input.timeout_ms)} ms → ${answer?.text.split(";")[0]}`);
        const expires = /expires in (\d+)m/.exec(answer?.text ?? "");
        assert.ok(expires, `Monitor's answer names no expiry: ${answer?.text}`);
        assert.equal(Number(expires[1]), Number(written[2]), "the recipe's claude -p deadline");
      } finally {
        await model.close();
      }
    } finally {
      await data.cleanup();
    }
  });

  test("with the README's PostToolUse hook every ask is still answered, and each poll's data reaches the model whole and once", async (t) => {
    const readme = await readFile(README, "utf8");
    const block = /```json\n(\{\n {2}"hooks"[\s\S]*?)```/.exec(readme);
    assert.ok(block, "docs/waking.md gives no hooks settings block");
    const settings = JSON.parse(block[1]!.replaceAll("/path/to/backchannel/dist/cli/main.js", CLI)) as Record<string, unknown>;
    const questions = ["What does this mean?", "Who said it?", "Why here?"];
    const run = await runReaderLoop({ wake: "exit", questions, claude: { settings } });
    t.diagnostic(run.summary);
    assert.deepEqual(run.model.errors, []);
    assert.deepEqual([...new Set(run.outcome.answers.map((answer) => answer.threadId))].sort(), questions.map((_, index) => threadId(index)).sort());
    // Claude Code hands the hook the JSON the model got, and would replace the model's copy
    // with the hook's line: the hook leaves it alone, so the model gets each poll's data
    // whole, once, and no additional context beside it.
    const polls = run.model.turns().filter((turn) => turn.result(hostTool("poll_agent_messages")));
    assert.ok(polls.length >= 1);
    let chars = 0;
    for (const turn of polls) {
      const shown = turn.result(hostTool("poll_agent_messages"))!.text;
      const data = JSON.parse(shown) as { messages: unknown[] };
      assert.ok(Array.isArray(data.messages), "the poll's result reached the model whole");
      assert.ok(!turn.transcript.includes("PostToolUse:mcp__backchannel__poll_agent_messages hook additional context"), "the data was sent twice");
      chars += shown.length;
    }
    t.diagnostic(`the model got ${chars} chars of poll results over ${polls.length} polls, each whole and once`);
  });

  test("tools/list_changed gives the model no turn, and Claude Code keeps showing poll_agent_messages's first description", async (t) => {
    const data = await tempDataDir();
    let channelId = "";
    const model = await startModelServer((turn) => {
      const opened = turn.result(hostTool("open_reader"));
      if (opened) {
        channelId = (JSON.parse(opened.text) as { channel_id: string }).channel_id;
        return { text: "The reader is open." };
      }
      if (turn.index === 0) return { tool: hostTool("open_reader"), input: { markdown: "# Notes\n\nText to read." } };
      return { text: "ok" };
    });
    const session = await startSession({ model, dataDir: data.dir, args: ["--debug-file", `${data.dir}/claude-debug.log`] });
    const app = await connectServer(data.dir);
    try {
      session.send("Open the reader.");
      const opened = await model.waitForTurn((turn) => turn.result(hostTool("open_reader")) !== undefined);
      const description = (turn: typeof opened) => turn.request.tools!.find((tool) => tool.name === hostTool("poll_agent_messages"))?.description;
      const before = description(opened);
      // A second server on the channel shows that the description does change on this ask.
      await app.callTool({ name: "open_reader", arguments: { channel_id: channelId, markdown: "# Notes\n\nText to read." } });
      const requests = model.turns().length;
      await app.callTool({
        name: "notify_agent",
        arguments: {
          channel_id: channelId,
          event: "ask",
          data: { thread_id: "t1", quote: "Text", paragraph: "Text to read.", question: "Why?", history: [] },
        },
      });
      // Claude Code hears the notification and refreshes its list (its debug log says so) ...
      await waitUntil(
        async () => (await readFile(`${data.dir}/claude-debug.log`, "utf8")).includes("Received tools/list_changed"),
        "Claude Code told of tools/list_changed",
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      const changed = await waitUntil(
        async () => {
          const now = (await app.listTools()).tools.find((tool) => tool.name === "poll_agent_messages")?.description ?? "";
          return now.includes("Waiting now") && now;
        },
        "the server's own description saying what waits",
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      await delay(1_000);
      assert.equal(model.turns().length, requests, "a description change gave the model a turn");
      // ... but the next turn, the user's, shows the description it had at the start.
      session.send("Anything new?");
      const next = await model.waitForTurn((turn) => turn.lastText.includes("Anything new?"), { from: requests });
      t.diagnostic(`description before: ${before}; the server's after the ask: ${changed}; Claude Code's after the ask: ${description(next)}`);
      assert.equal(description(next), before);
    } finally {
      await app.close();
      await session.stop();
      await model.close();
      await data.cleanup();
    }
  });
});
