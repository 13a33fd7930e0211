/**
 * A long document in a real MCP Apps host: MCP Inspector 2.12's Apps tab in headless
 * Chromium (test/support/inspector.ts), `backchannel serve` behind mcp-proxy, a 718 KB
 * markdown document of about 160 sections opened by path. A question about a sentence
 * two thirds down is answered in its card; after a 60 KB answer, every follow-up still
 * reaches the agent with the thread's history and is answered. What crosses the host
 * stays small: the document travels to the reader compressed, in one message, and a
 * follow-up names the history the server holds instead of carrying it (a host that
 * logs what it relays re-renders it all with every later message). The figures are in bench/ (`npm run bench -- --only reader`).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { browserSkipReason, waitUntil } from "./support/helpers.js";
import { inspectorForSuite } from "./support/inspector.js";
import { longMarkdown } from "./support/long-document.js";
import { askAbout, askFollowUp, ReaderAgent, watchAnswer } from "./support/reader-driver.js";

/** A safety net for one step on a loaded machine: on an idle one an ask takes well under a second. */
const STEP_MS = 20_000;

const skip = browserSkipReason();

describe("a long document in MCP Inspector's Apps host", { skip, timeout: 300_000 }, () => {
  const rig = inspectorForSuite("mcp-proxy");

  test("a question deep in it is answered, and follow-ups after a 60 KB answer reach the agent", async () => {
    const { inspector, server, dataDir } = rig;
    const { markdown, marker } = longMarkdown(718 * 1024, 11);
    const path = join(dataDir, "manual.md");
    await writeFile(path, markdown);
    const lastHeading = [...markdown.matchAll(/^#+ (Section \d+: .*)$/gm)].at(-1)![1]!;
    const channelId = "ch-long-inspector";
    const agent = await ReaderAgent.start(dataDir, channelId);
    try {
      const opened = await inspector.openApp(server, "open_reader", { path, channel_id: channelId });
      const { frame } = opened;
      await opened.app.locator("#doc:not([aria-busy])").locator("h4, h3, h2", { hasText: lastHeading }).waitFor({ timeout: 120_000 });

      const state = (await opened.answer(opened.toolCalls("reader_state")[0]!)).result?.structuredContent as {
        document?: { text?: string; text_gzip?: string };
      };
      const sent = state.document?.text_gzip ?? state.document?.text ?? "";
      assert.ok(
        state.document?.text_gzip !== undefined && sent.length < markdown.length / 2,
        `the document reached the host in ${sent.length} characters, not compressed below half its ${markdown.length}`,
      );
      await agent.next("ready", 60_000);

      await askAbout(frame, marker, "What does the marker sentence mean?");
      const { ask } = await agent.nextAsk(STEP_MS);
      assert.ok(ask.paragraph.includes(marker), "the ask carries the paragraph around the passage, two thirds down");
      assert.equal(ask.quote, marker);
      const threadId = ask.thread_id;
      const answerIt = async (text: string, needle: string) => {
        const appeared = await watchAnswer(frame, threadId, needle);
        await agent.send("answer", { thread_id: threadId, text });
        await appeared();
      };
      await answerIt("It marks the place the test asks about.", "the place the test asks about");

      await askFollowUp(frame, threadId, "Tell me everything.");
      await agent.nextAsk(STEP_MS);
      const longAnswer = longMarkdown(60 * 1024).markdown;
      await answerIt(`${longAnswer}\n\nThat is all.`, "That is all.");

      for (let i = 1; i <= 3; i += 1) {
        const question = `Follow-up ${i}?`;
        const enteredAt = await askFollowUp(frame, threadId, question);
        const { ask: followUp, at } = await agent.nextAsk(STEP_MS);
        assert.equal(followUp.question, question);
        assert.ok(at - enteredAt < STEP_MS, `follow-up ${i} took ${at - enteredAt} ms to reach the agent`);
        assert.ok(
          // The ask may cut the long answer short to fit the message limit, never drop its start.
          followUp.history.some((entry) => entry.role === "agent" && entry.text.startsWith(longAnswer.slice(0, 2_000))),
          `follow-up ${i} lacks the long answer in its history`,
        );
        // What crossed the host: the question and a reference to the history the server holds, not the 60 KB again.
        // The page's request reaches this process through DevTools, possibly after the agent got the ask: wait for it (5 s at most).
        const recorded = () =>
          opened.toolCalls("notify_agent").findLast((candidate) => (candidate.params.data as { question?: string }).question === question);
        const call = await waitUntil(recorded, `follow-up ${i}'s notify_agent seen`, { timeoutMs: 5_000 });
        const bytes = Buffer.byteLength(JSON.stringify(call.params));
        assert.ok(bytes < 8_192, `follow-up ${i} carried ${bytes} bytes through the host`);
        await answerIt(`Answer to follow-up ${i}.`, `follow-up ${i}.`);
      }
      // The server keeps each answer in its thread as the agent sends it: none comes back through the host.
      const echoed = opened.toolCalls("reader_record").filter((call) => (call.params.message as { role?: string } | undefined)?.role === "agent");
      assert.deepEqual(
        echoed.map((call) => Buffer.byteLength(JSON.stringify(call.params))),
        [],
        "the reader sent answers back through the host (bytes of each reader_record)",
      );
      assert.deepEqual(inspector.pageErrors(), []);
      await opened.close();
    } finally {
      await agent.close();
    }
  });
});
