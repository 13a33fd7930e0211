/**
 * The whole reader loop across two real hosts: the reader in the playground (a real MCP
 * Apps host) in Chromium, where a person highlights a passage, asks and reads the card;
 * and the agent in the real Claude Code (the pinned version, see
 * test/support/claude-code/), on one data directory, as a chat and its app share one
 * machine. Two agents, one after the other: one following backchannel's instructions
 * with the exit-mode watcher in background Bash (reader-policy.ts), and one with the
 * plugin loaded, answering each wake as the wake hook's reminder says (plugin-policy.ts).
 * Five asks each, two of them follow-ups in a card already answered: every answer
 * appears in its card.
 */
/// <reference lib="dom" />
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { askAbout, askFollowUp } from "./support/reader-driver.js";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, startPlayground, tempDataDir, type PlaygroundProcess } from "./support/helpers.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { type ModelServer, type Policy, startModelServer } from "./support/claude-code/model-server.js";
import { PLUGIN_ROOT, pluginPolicy, pluginTool, waitForWatcher } from "./support/claude-code/plugin-policy.js";
import { hostTool, readerLoopPolicy } from "./support/claude-code/reader-policy.js";
import { type ClaudeOptions, type ClaudeSession, startSession } from "./support/claude-code/session.js";

const skip = claudeCodeSkipReason() ?? browserSkipReason();

const DOCUMENT = [
  "# Field notes",
  "",
  "The queue is the truth, and the watcher only peeks at it.",
  "",
  "Every answer clears what it answered, so nothing is lost when a session dies.",
  "",
  "The reader asks in the margin; the agent answers in the same card.",
].join("\n");

/** The person's five asks: a passage and a question, or a follow-up in the card of an earlier ask (by its index). */
const ASKS: ({ passage: string; question: string } | { followUp: number; question: string })[] = [
  { passage: "The queue is the truth", question: "Why the queue?" },
  { passage: "nothing is lost", question: "How is nothing lost?" },
  { followUp: 0, question: "And the watcher?" },
  { passage: "answers in the same card", question: "Which card?" },
  { followUp: 1, question: "Even on a crash?" },
];

/** An agent in Claude Code: its scripted model, how its session runs, and the answer it writes to an ask. */
interface Agent {
  name: string;
  policy: Policy;
  claude: Omit<ClaudeOptions, "model" | "dataDir">;
  openReader: string;
  /** Resolves once the agent listens for the reader (its watcher or wake hook runs). */
  listening(model: ModelServer, dataDir: string): Promise<void>;
  /** The answer's text for `question` in `thread`. */
  answer: (thread: string, question: string) => RegExp;
}

const AGENTS: (() => Agent)[] = [
  () => ({
    name: "backchannel's instructions, the exit-mode watcher in background Bash",
    policy: readerLoopPolicy({ wake: "exit", markdown: DOCUMENT }).policy,
    claude: {},
    openReader: hostTool("open_reader"),
    // The watcher is armed in the turn that opened the reader; an ask before it runs still wakes it (it peeks first).
    listening: async (model) => void (await model.waitForTurn((turn) => turn.result("Bash") !== undefined, { timeoutMs: 90_000 })),
    answer: (_thread, question) => new RegExp(`^Answer to “${literal(question)}”\\.$`),
  }),
  () => ({
    name: "the plugin, a model that arms nothing",
    policy: pluginPolicy({ markdown: DOCUMENT }),
    claude: { configure: "none", args: ["--plugin-dir", PLUGIN_ROOT], allowedTools: ["mcp__plugin_backchannel_backchannel", "ToolSearch"] },
    openReader: pluginTool("open_reader"),
    listening: (_model, dataDir) => waitForWatcher(dataDir),
    answer: (thread) => new RegExp(`^Answer #\\d+ to ${literal(thread)}$`),
  }),
];

for (const makeAgent of AGENTS) {
  const agent = makeAgent();
  describe(`two real hosts: the reader in the playground in Chromium, the agent in Claude Code (${agent.name})`, { skip }, () => {
    let dataDir: string;
    let cleanup: () => Promise<void>;
    let model: ModelServer;
    let session: ClaudeSession;
    let playground: PlaygroundProcess;
    let browser: Browser;
    const pageErrors: string[] = [];

    before(async () => {
      ({ dir: dataDir, cleanup } = await tempDataDir());
      model = await startModelServer(agent.policy);
      session = await startSession({ model, dataDir, ...agent.claude });
      playground = await startPlayground(dataDir);
      browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    });

    after(async () => {
      await browser?.close();
      await playground?.stop();
      await session?.stop();
      await model?.close();
      await cleanup?.();
    });

    test("five asks, follow-ups included: every answer appears in its card", { timeout: 150_000 }, async () => {
      session.send("Open the reader on my field notes.");
      const opened = await model.waitForTurn((turn) => turn.result(agent.openReader) !== undefined, { timeoutMs: 90_000 });
      const channelId = /"channel_id":"([\w-]+)"/.exec(opened.result(agent.openReader)!.text)?.[1];
      assert.ok(channelId, "open_reader named its channel");
      await agent.listening(model, dataDir);

      // The chat shows the channel the agent opened, with its document (the playground's ?agent=off: no agent of its own).
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(playground.page(`/?agent=off#${channelId}`));
      const frame = await readerFrame(page);
      assert.match((await frame.locator("#doc").textContent()) ?? "", /The queue is the truth/);

      const threads: string[] = [];
      for (const [index, ask] of ASKS.entries()) {
        let thread: string;
        if ("passage" in ask) {
          const before = await cardThreads(frame);
          await askAbout(frame, ask.passage, ask.question);
          thread = (await cardThreads(frame)).find((id) => !before.includes(id)) ?? "";
          assert.notEqual(thread, "", `ask ${index + 1} made a card`);
          threads.push(thread);
        } else {
          thread = threads[ask.followUp]!;
          await askFollowUp(frame, thread, ask.question);
        }
        const answers = frame.locator(`.card[data-thread="${thread}"] .message.agent`);
        const expected = "passage" in ask ? 1 : 2;
        // The answer the model wrote for this ask is the thread's newest agent message.
        await answers.nth(expected - 1).waitFor({ timeout: 60_000 });
        assert.match(((await answers.nth(expected - 1).textContent()) ?? "").trim(), agent.answer(thread, ask.question));
        assert.equal(await answers.count(), expected, `the card of ask ${index + 1} holds its answers only`);
        // The agent listens again before the person asks again (the plugin: its wake hook runs again; the exit watcher was re-armed in the reply that answered).
        await agent.listening(model, dataDir);
      }
      assert.deepEqual(model.errors, []);
      assert.deepEqual(pageErrors, []);
    });
  });
}

/** The reader's frame, once its document is in. */
async function readerFrame(page: Page): Promise<Frame> {
  await page.locator("#frame iframe").waitFor();
  const frame = await (await page.locator("#frame iframe").elementHandle())?.contentFrame();
  if (!frame) throw new Error("the playground shows no reader");
  await frame.locator("#doc [data-block]").first().waitFor();
  return frame;
}

/** `text` for a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The thread ids of the cards the reader shows. */
function cardThreads(frame: Frame): Promise<string[]> {
  return frame.evaluate(() => [...document.querySelectorAll<HTMLElement>(".card[data-thread]")].map((card) => card.dataset.thread ?? ""));
}
