/**
 * The one-chat setting end to end, in a real host that runs here: mcp-use's inspector
 * 20.3.10 (its chat page renders the reader inline and calls the model), against
 * `backchannel serve --http`, with a scripted Chat Completions model that acts only on
 * what the page shows it (test/support/mcp-use/reader-policy.ts). Chromium is the
 * person: it configures the chat's provider, types ONE request, and then only asks in
 * the reader's margin.
 *
 * In this host the reader's own message (`ui/message`) is sent as a turn at once, so the
 * reader rings the agent through the chat for each question (app/presence.ts); the chat
 * refuses it while a turn runs ("Chat is busy"), and the question goes when it is free.
 * The model reads each question from backchannel (`poll_agent_messages`) and answers with
 * `notify_ui`; the answer shows in the card.
 *
 * Needs the inspector and its Node 22 (`npm run mcp-use:install`); without them this
 * suite is skipped, and under CI it fails.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Frame } from "playwright-core";
import { browserSkipReason } from "./support/helpers.js";
import { type OneChat, startOneChat } from "./support/mcp-use/host.js";
import { mcpUseSkipReason } from "./support/mcp-use/install.js";
import { readerChatPolicy } from "./support/mcp-use/reader-policy.js";
import { askAbout, askFollowUp } from "./support/reader-driver.js";

const DOCUMENT = [
  "# Rivers and mountains",
  "",
  "Rivers carve valleys over long spans of time. Their water carries sand to the sea.",
  "",
  "Mountains rise where plates of the crust collide. Their peaks wear down slowly.",
  "",
  "Lakes fill the hollows that glaciers leave behind. Some are very deep.",
].join("\n");

const REQUEST = "Open a short text about rivers and mountains in the backchannel reader, and answer my questions there.";

/** The words of a chat that sends the app's message by itself: nothing tells the person to send. */
const SEND_IT_THERE = /send it there|when you send it|Ask in the chat/;

const skip = browserSkipReason() ?? mcpUseSkipReason();

describe("the agent and the reader in one chat: mcp-use's inspector", { skip, timeout: 300_000 }, () => {
  test("five asks in the margin, follow-ups and asks while the chat is busy among them, each answered once in its card", async (t) => {
    /** Set while the model holds the turn that answers the first follow-up: the chat is busy. */
    let holding: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (holding = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const model = readerChatPolicy({
      title: "Rivers and mountains",
      markdown: DOCUMENT,
      async hold(asks) {
        if (!asks.some((ask) => ask.question === "And how long does that take?")) return;
        holding?.();
        await released;
      },
    });
    const chat: OneChat = await startOneChat(model.policy);
    try {
      await chat.configure();
      await chat.send(REQUEST);
      await model.opened;
      const reader = await chat.reader();

      // What the host tells the app: the chat takes a message (ui/message), and its name.
      const host = await chat.hostAnswer(reader);
      assert.equal(host.hostInfo.name, "mcp-use-inspector");
      assert.equal(host.hostInfo.version, "20.3.10");
      assert.ok(host.hostCapabilities.message, "the chat declares ui/message");

      // What the model is shown: the model-visible tools only, a fixed system prompt, no server instructions.
      const first = chat.model.turns()[0]!;
      assert.deepEqual(first.toolNames.sort(), [
        "notify_ui",
        "open_app",
        "open_reader",
        "poll_agent_messages",
        "post_wall",
        "read_recipe",
        "save_app",
      ]);
      assert.deepEqual(first.system, ["You are a helpful assistant with access to MCP tools. Help users interact with the MCP server."]);
      // This model has no shell: what open_reader hands it names no command to run.
      const opened = chat.model
        .turns()
        .map((turn) => turn.result("open_reader"))
        .find((result) => result !== undefined);
      assert.ok(opened, "the model saw open_reader's result");
      assert.doesNotMatch(opened.text, /watch_command|backchannel watch|run_in_background|in the background/);

      // 1 and 2: a question each on two passages; each goes to the chat by itself and is answered in its card.
      await askAbout(reader, "Rivers carve valleys", "Why valleys?");
      const rivers = await threadOf(reader, "Why valleys?");
      await answerShown(reader, rivers, "Why valleys?");
      await askAbout(reader, "Mountains rise", "Which plates?");
      const mountains = await threadOf(reader, "Which plates?");
      await answerShown(reader, mountains, "Which plates?");

      // 3: a follow-up; the model holds its turn after reading it, so the chat stays busy…
      await askFollowUp(reader, rivers, "And how long does that take?");
      await held;
      // 4 and 5: … while the person asks a follow-up and a new question. The chat refuses
      // the reader's message; the reader says it waits, and sends it when the chat is free.
      await askFollowUp(reader, mountains, "Do they still move?");
      await askAbout(reader, "Lakes fill the hollows", "How deep?");
      const lakes = await threadOf(reader, "How deep?");
      await reader.locator(`.card[data-thread="${rivers}"] .card-note`, { hasText: "sent to the agent in the chat" }).waitFor();
      await reader.locator("#offer", { hasText: "busy" }).waitFor();
      const busyWords = ((await reader.locator("#offer-text").textContent()) ?? "").trim();
      t.diagnostic(`while the chat is busy, the reader says: ${busyWords}`);
      // The reader's words fit this host: nothing it shows says "send it there", no button.
      const words = await reader.locator("#offer-text:visible, #offer-button:visible, .card-note:visible").allTextContents();
      assert.doesNotMatch(words.join("\n"), SEND_IT_THERE);
      assert.equal(await reader.locator("#offer-button").isVisible(), false, "no button: the question goes by itself");
      release();
      await answerShown(reader, rivers, "And how long does that take?");
      await answerShown(reader, mountains, "Do they still move?");
      await answerShown(reader, lakes, "How deep?");
      await reader.locator("#offer").waitFor({ state: "hidden" });

      // Five asks, five answers, each once, each in its own card.
      const asked = ["Why valleys?", "Which plates?", "And how long does that take?", "Do they still move?", "How deep?"];
      assert.deepEqual(model.answered.map((answer) => answer.question).sort(), [...asked].sort());
      const expected = new Map([
        [rivers, ["Why valleys?", "And how long does that take?"]],
        [mountains, ["Which plates?", "Do they still move?"]],
        [lakes, ["How deep?"]],
      ]);
      for (const [threadId, questions] of expected) {
        const shown = await reader.locator(`.card[data-thread="${threadId}"] .message.agent`).allInnerTexts();
        const written = model.answered.filter((answer) => answer.threadId === threadId).map((answer) => answer.text);
        assert.deepEqual(
          shown.map((text) => text.trim()),
          written,
          `card ${threadId} shows each of its answers once, in order`,
        );
        assert.equal(written.length, questions.length);
      }
      assert.equal(model.emptyPolls, 0, "no turn was spent on a question answered already");
      assert.deepEqual(chat.model.errors, []);

      // The person typed one message; every other message in the chat is the reader's.
      const messages = await chat.userMessages();
      assert.ok(messages[0]?.includes(REQUEST), `the first message is the person's request: ${messages[0]}`);
      assert.equal(messages.length, 1 + model.rings.length, `one message per ring: ${JSON.stringify(messages)}`);
      for (const message of messages.slice(1)) {
        assert.match(message, /^Asked in the reader: [\s\S]*waits? in the reader too/);
        // Sent unread as the person's words: the person's questions only, never the document's text.
        assert.doesNotMatch(message, /Rivers carve|Mountains rise|Lakes fill|Rivers and mountains/);
      }
      t.diagnostic(`${model.rings.length} messages from the reader for 5 asks; ${chat.model.turns().length} model requests`);

      assert.deepEqual(chat.pageErrors, []);
    } finally {
      release();
      await chat.close();
    }
  });
});

/** The thread id of the card whose question is `question`. */
async function threadOf(frame: Frame, question: string): Promise<string> {
  const card = frame.locator(".card", { has: frame.locator(".message.user", { hasText: question }) });
  const id = await card.getAttribute("data-thread");
  if (!id) throw new Error(`no card asks ${question}`);
  return id;
}

/** Waits until the card of `threadId` shows the answer to `question`. */
async function answerShown(frame: Frame, threadId: string, question: string): Promise<void> {
  await frame.locator(`.card[data-thread="${threadId}"] .message.agent`, { hasText: `to “${question}”` }).waitFor();
}
