/**
 * The reader in a real MCP Apps host that nobody here wrote: MCP Inspector 2.12's Apps
 * tab in headless Chromium (test/support/inspector.ts), reaching backchannel through
 * mcp-proxy (the stdio server bridged to Streamable HTTP) and directly over
 * `serve --http`. A person asks at a fast pace (new threads, a burst of two, and
 * follow-ups); the agent, an SDK client on its own server process sharing the data
 * directory, answers each.
 *
 * What must hold in a host that runs an app's calls side by side and keeps a cancelled
 * call's connection for a minute: every question reaches the agent within a few
 * seconds, every answer shows in its card, the reader never falls back to short polls,
 * and it does not cancel its polls to send (the calls the page sent to Inspector's
 * backend are read from outside the app). The figures of this host are in bench/
 * (`npm run bench -- --only inspector`), not here.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { browserSkipReason, tempDataDir } from "./support/helpers.js";
import { type InspectorHost, type ServerKind, startInspector, startServer } from "./support/inspector.js";
import { askAbout, askFollowUp, ReaderAgent, watchAnswer } from "./support/reader-driver.js";

const DOCUMENT = [
  "# Queues and watchers",
  "",
  "A message carries a sequence number that grows by one and is never reused.",
  "",
  "A cursor acknowledges everything up to it, so a lost response costs nothing.",
  "",
  "The watcher is a small command that exits the moment a message waits.",
  "",
  "A long poll waits on the server until news lands or its time is up.",
].join("\n");

/** The person's questions: new threads (A, then B and C in a burst) and follow-ups, nine in all. */
const SCRIPT: { thread: string; passage?: string; question: string; burst?: boolean }[] = [
  { thread: "A", passage: "sequence number", question: "What is a sequence number for?" },
  { thread: "A", question: "Why is it never reused?" },
  { thread: "B", passage: "acknowledges everything", question: "What does the cursor acknowledge?", burst: true },
  { thread: "C", passage: "small command", question: "What does the watcher run?", burst: true },
  { thread: "B", question: "And when a response is lost?" },
  { thread: "C", question: "When does it exit?" },
  { thread: "D", passage: "long poll waits", question: "How long does a poll wait?" },
  { thread: "A", question: "Does the number survive a restart?" },
  { thread: "D", question: "What ends the wait early?" },
];

/** No ask may wait longer than this to reach the agent (a stall was 24 s; on an idle machine it is well under 1 s). */
const MAX_ASK_MS = 5_000;

const skip = browserSkipReason();

describe("the reader in MCP Inspector's Apps host", { skip, timeout: 600_000 }, () => {
  let inspector: InspectorHost;
  let dataDir: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    inspector = await startInspector();
  });
  after(async () => {
    await inspector?.close();
    await cleanup?.();
  });

  for (const kind of ["mcp-proxy", "http"] as ServerKind[]) {
    test(`through ${kind}: nine questions at a fast pace all reach the agent, all answers show, no short polls, no cancels`, async () => {
      const server = await startServer(dataDir, kind);
      const channelId = `ch-inspector-${kind}`;
      const agent = await ReaderAgent.start(dataDir, channelId);
      try {
        const opened = await inspector.openApp(server, "open_reader", { title: "Queues and watchers", markdown: DOCUMENT, channel_id: channelId });
        const { frame } = opened;
        await opened.app.locator("#doc p").first().waitFor();
        await agent.next("ready", 60_000);
        await agent.send("hello", {});
        await opened.app.locator("#presence", { hasText: "Agent is listening" }).waitFor();

        const threads = new Map<string, string>();
        const askMs: number[] = [];
        const answerMs: number[] = [];
        const enteredAt: number[] = [];
        for (let index = 0; index < SCRIPT.length; index++) {
          const step = SCRIPT[index]!;
          // A burst: the second new thread is asked before the agent has read the first.
          const steps = step.burst ? [step, SCRIPT[++index]!] : [step];
          // The agent reads while the person types: each ask is timed from its own Enter.
          let reading: Promise<unknown> = Promise.resolve();
          const arrivals = steps.map(() => {
            const next = reading.then(() => agent.nextAsk(30_000));
            reading = next;
            return next;
          });
          const entered: number[] = [];
          for (const { thread, passage, question } of steps) {
            const threadId = threads.get(thread);
            entered.push(threadId ? await askFollowUp(frame, threadId, question) : await askAbout(frame, passage!, question));
          }
          for (const [i, { thread, question }] of steps.entries()) {
            const { ask, at } = await arrivals[i]!;
            assert.equal(ask.question, question, "the questions reach the agent in order");
            threads.set(thread, ask.thread_id);
            askMs.push(at - entered[i]!);
            enteredAt.push(entered[i]!);
          }
          for (const { thread, question } of steps) {
            const threadId = threads.get(thread)!;
            const text = `Answer to “${question}”`;
            const appeared = await watchAnswer(frame, threadId, text);
            const sentAt = await agent.send("answer", { thread_id: threadId, text });
            answerMs.push((await appeared()) - sentAt);
          }
        }
        process.stderr.write(`\nInspector via ${kind}: ask → agent ${askMs.join(", ")} ms; notify_ui → screen ${answerMs.join(", ")} ms\n`);

        assert.equal(askMs.length, 9, "every question reached the agent");
        assert.equal(answerMs.length, 9, "every answer showed in its card");
        assert.ok(Math.max(...askMs) <= MAX_ASK_MS, `an ask waited ${Math.max(...askMs)} ms (all: ${askMs.join(", ")})`);
        const fastest3 = Math.min(...enteredAt.slice(2).map((at, i) => at - enteredAt[i]!));
        assert.ok(fastest3 <= 10_000, `three questions within 10 s (closest three: ${fastest3} ms)`);

        const polls = opened.toolCalls("poll_ui_messages").map((call) => call.params.wait_ms);
        assert.equal(polls[0], 0, "the first poll does not wait");
        assert.deepEqual(
          polls.slice(1).filter((waitMs) => waitMs === 0),
          [],
          `no short polls after the first (wait_ms of each: ${polls.join(", ")})`,
        );
        assert.deepEqual(opened.cancels(), [], "the reader cancelled no call");
        assert.equal(opened.toolCalls("notify_agent").length, 10, "ready and nine asks, each sent once");
        assert.deepEqual(inspector.pageErrors(), []);
        await opened.close();
      } catch (error) {
        process.stderr.write(`\n--- ${kind} server:\n${server.output().slice(-3000)}\n--- inspector:\n${inspector.output().slice(-3000)}\n`);
        throw error;
      } finally {
        await agent.close();
        await server.stop();
      }
    });
  }

  // Inspector does not declare the `message` capability (ui/message), so the reader
  // cannot put the question into the chat: it says so, and what the person can do.
  test("with no agent, the reader says so and, with no way into this host's chat, tells the person what to do", async () => {
    const server = await startServer(dataDir, "http");
    try {
      const opened = await inspector.openApp(server, "open_reader", {
        title: "Queues and watchers",
        markdown: DOCUMENT,
        channel_id: "ch-inspector-no-agent",
      });
      const { frame, app } = opened;
      await app.locator("#doc p").first().waitFor();
      await askAbout(frame, "small command", "Is anyone there?");
      await app.locator("#presence", { hasText: "No agent is reading along yet" }).waitFor({ timeout: 20_000 });
      const offer = app.locator("#offer-text");
      await offer.waitFor();
      assert.match((await offer.textContent()) ?? "", /Send any message in the chat/);
      assert.equal(await app.locator("#offer-button").isVisible(), false, "no button that could not work here");
      assert.equal(opened.toolCalls("notify_agent").length, 2, "ready and the one ask");
      await opened.close();
    } finally {
      await server.stop();
    }
  });
});
