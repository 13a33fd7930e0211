/**
 * The whole reader loop in the real Claude Code (the pinned version, see
 * test/support/claude-code/): a long-lived `-p --input-format stream-json` session whose
 * scripted model follows backchannel's instructions as Claude Code shows them, and an app
 * (an SDK client on the same data directory) that asks five questions. The model opens
 * the reader, runs the watcher the way the instructions say, and is woken by Claude Code
 * itself; every answer must reach the app, and nothing may be left running after.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { threadId } from "./support/simulated-app.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { runReaderLoop } from "./support/claude-code/reader-run.js";

const skip = claudeCodeSkipReason();

const QUESTIONS = ["What does this mean?", "Who said it?", "And then?", "Is that true?", "Why here?"];

describe("the reader loop in Claude Code", { skip }, () => {
  test("the exit-mode watcher in background Bash: every one of five asks is answered, woken by task notifications", async (t) => {
    let idleRequests = -1;
    const run = await runReaderLoop({
      wake: "exit",
      questions: QUESTIONS,
      // While nothing is asked, the armed watcher costs the model nothing: no request at all.
      whileOpen: async ({ model }) => {
        await model.waitForTurn((turn) => turn.results.some((result) => result.name === "Bash"));
        const before = model.turns().length;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        idleRequests = model.turns().length - before;
      },
    });
    t.diagnostic(run.summary);
    const { outcome, loop } = run;
    assert.deepEqual(run.model.errors, []);
    assert.equal(outcome.hellos, 1, "the app's ready got exactly one hello");
    assert.deepEqual([...new Set(outcome.answers.map((answer) => answer.threadId))].sort(), QUESTIONS.map((_, index) => threadId(index)).sort());
    for (const [index, question] of QUESTIONS.entries()) {
      const answer = outcome.answers.find((received) => received.threadId === threadId(index))!;
      assert.equal(answer.text, `Answer to “${question}”.`);
    }
    // Claude Code woke the model: each wake was a task notification of the watcher's exit 0.
    assert.ok(loop.wakes.length >= 1 && loop.wakes.length <= QUESTIONS.length + 1, `${loop.wakes.length} wakes`);
    for (const wake of loop.wakes) assert.match(wake.text, /<task-notification>[\s\S]*completed \(exit code 0\)/);
    assert.equal(idleRequests, 0, "the model got requests while nothing was asked");
    assert.deepEqual(run.leftovers, [], "processes of the session still run after it stopped");
  });

  test("the follow-mode watcher under Monitor, as the recipe writes it: five asks answered, one notification per line, within Monitor's cap", async (t) => {
    const run = await runReaderLoop({ wake: "monitor", questions: QUESTIONS });
    t.diagnostic(run.summary);
    const { outcome, loop } = run;
    assert.deepEqual(run.model.errors, []);
    assert.equal(outcome.hellos, 1);
    assert.deepEqual([...new Set(outcome.answers.map((answer) => answer.threadId))].sort(), QUESTIONS.map((_, index) => threadId(index)).sort());
    // One Monitor, never re-armed in a run this short; every wake is one of its events, a watcher line.
    assert.equal(loop.arms, 1);
    assert.ok(loop.wakes.length >= 1);
    for (const wake of loop.wakes)
      assert.match(wake.text, /<summary>Monitor event: "backchannel watcher"<\/summary>\s*<event>ch-[^ ]+ #\d+ (ready|ask)/);
    // What Claude Code says it made of the recipe's timeout_ms: the watch must not be cut short of it.
    const started = run.model
      .turns()
      .flatMap((turn) => turn.results)
      .find((result) => result.name === "Monitor");
    const expires = /expires in (\d+)m/.exec(started?.text ?? "");
    assert.ok(expires, `Monitor's answer names no expiry: ${started?.text}`);
    const capMs = Number(expires[1]) * 60_000;
    t.diagnostic(`Monitor: ${JSON.stringify(loop.monitor)} → ${started?.text}`);
    assert.ok(
      (loop.monitor?.timeout_ms as number) <= capMs,
      `the recipe asks Monitor for ${loop.monitor?.timeout_ms} ms; Claude Code caps it at ${capMs}`,
    );
    // The watcher's own timeout is no longer than Monitor's, so that it, not Monitor, ends the watch with exit 2.
    const watcherTimeout = /--timeout (\d+)/.exec(String(loop.monitor?.command));
    assert.ok(watcherTimeout && Number(watcherTimeout[1]) * 1000 <= capMs, `the recipe's watcher runs longer than Monitor's ${capMs} ms`);
    assert.deepEqual(run.leftovers, []);
  });
});
