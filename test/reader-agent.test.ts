/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The reader and the agent when things go the way people make them go, in Chromium
 * through the playground: a reload just after Enter, documents opened in the
 * playground and on channels opened elsewhere, an agent that is not there (the
 * no-agent offer puts the question into the chat, once), and the playground's agent
 * panel leaving the keyboard focus where the person types.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { browserSkipReason, connectServer, structured } from "./support/helpers.js";
import { AS_CLAUDE_CODE } from "./support/claude-code/session.js";
import { readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

interface StateResult {
  document: { title: string; text: string } | null;
  threads: { thread_id: string; messages: { role: string; text: string }[] }[];
}

describe("the reader and its agent, as people use them", { skip, timeout: 180_000 }, () => {
  const rig = readerRigForSuite();

  const stateOf = async (channelId: string) =>
    structured<StateResult>(await rig.agent.callTool({ name: "reader_state", arguments: { channel_id: channelId } }));

  test("a page reload just after Enter keeps the thread, and the answer to it shows", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    await reader.nextMessage("ready");
    await reader.selectAndAsk("sequence number");
    const frame = await reader.frame();
    await frame.locator(".card textarea:focus").fill("Does a reload lose me?");
    // "Just after": once the host page has sent the question's two calls (its record, then
    // the ask). A reload before the host page got them from the frame is a tab closed
    // before Enter; Enter alone returns while they may still be on their way to it.
    const sent = (tool: string) =>
      reader.page.waitForRequest(
        (request) => (request.postData() ?? "").includes(`"name":"${tool}"`) && request.postData()!.includes("Does a reload lose me?"),
      );
    const bothSent = Promise.all([sent("reader_record"), sent("notify_agent")]);
    await frame.locator(".card textarea:focus").press("Enter");
    await bothSent;
    await reader.page.reload();
    const { message } = await reader.nextMessage("ask");
    const threadId = String(message.data.thread_id);
    const after = await reader.frame();
    const card = after.locator(`.card[data-thread="${threadId}"]`);
    await card.waitFor();
    assert.equal(await card.locator(".message.user").textContent(), "Does a reload lose me?");
    assert.equal(await after.locator(`mark[data-thread="${threadId}"]`).first().textContent(), "sequence number");
    await card.locator(".card-note", { hasText: "Waiting for the agent" }).waitFor();
    await reader.answer(threadId, "No: it was recorded before it was sent.", "recorded before");
    await reader.page.close();
  });

  test("a channel opened elsewhere keeps its document and threads when the playground shows it", async () => {
    const channelId = await rig.openDocument("# Elsewhere\n\nA document the agent opened in another chat.\n", "Elsewhere");
    structured(
      await rig.agent.callTool({
        name: "reader_record",
        arguments: {
          channel_id: channelId,
          thread_id: "t-elsewhere",
          quote: "another chat",
          paragraph: "A document the agent opened in another chat.",
          anchor: { block: 1, start: 31, end: 43 },
          message: { id: "q-1", role: "user", text: "Which chat?" },
        },
      }),
    );
    const reader = await rig.open({ query: "?agent=off", hash: channelId });
    const frame = await reader.frame();
    assert.equal(reader.channelId, channelId);
    assert.equal(await frame.locator("#title").textContent(), "Elsewhere");
    await frame.locator(".card[data-thread='t-elsewhere'] .message.user", { hasText: "Which chat?" }).waitFor();
    const state = await stateOf(channelId);
    assert.equal(state.document?.title, "Elsewhere", "the document was not replaced by the sample");
    assert.equal(state.threads.length, 1, "the thread was not dropped");
    await reader.page.close();
  });

  test("the playground opens pasted text in a new reader and leaves the one before as it was", async () => {
    const reader = await rig.open();
    const before = reader.channelId;
    await reader.page.locator("#open-toggle").click();
    await reader.page.locator("#open-text").fill("# Pasted\n\nA paragraph someone pasted.\n");
    await reader.page.locator("#open-submit").click();
    await reader.page.locator("#channel", { hasText: /^ch-/ }).filter({ hasNotText: before }).waitFor();
    const channelId = (await reader.page.locator("#channel").textContent())!;
    const frame = await reader.frame();
    await frame.locator("#doc", { hasText: "A paragraph someone pasted." }).waitFor();
    assert.equal((await stateOf(channelId)).document?.text, "# Pasted\n\nA paragraph someone pasted.\n");
    assert.equal((await stateOf(before)).document?.title, "How backchannel works", "the earlier channel keeps its document");
    assert.equal(new URL(reader.page.url()).hash, `#${channelId}`, "a reload shows the new reader");

    // The agent panel follows the new channel: it greets the new reader.
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.page.close();
  });

  test("with no agent, the reader says so, shows the time waited, and puts the question into the chat once", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    // Nobody says hello on this channel.
    await reader.selectAndAsk("sequence number");
    await reader.submit("Is anyone there?");
    const { message } = await reader.nextMessage("ask");
    const threadId = String(message.data.thread_id);
    const frame = await reader.frame();
    await frame.locator(`.card[data-thread="${threadId}"] .card-note`, { hasText: /Waiting for the agent… [1-9] s/ }).waitFor();
    await frame.locator("#presence", { hasText: "No agent is reading along yet" }).waitFor({ timeout: 10_000 });
    const offer = frame.locator("#offer-button");
    await offer.waitFor();
    assert.equal(await offer.textContent(), "Ask in the chat");
    assert.doesNotMatch((await frame.locator("#offer").textContent()) ?? "", /notify|ui\/message|channel|poll/i, "no developer wording");
    await offer.click();

    const chat = reader.page.locator("#chat-input");
    await reader.page.waitForFunction(() => (document.getElementById("chat-input") as HTMLTextAreaElement).value !== "");
    const text = await chat.inputValue();
    assert.match(text, /About “sequence number” in “How backchannel works”: Is anyone there\?/);
    assert.match(text, new RegExp(`channel ${reader.channelId} \\(thread ${threadId}\\)`), "the agent learns where the question already waits");
    assert.match(text, /only once/);
    await frame.locator(`.card[data-thread="${threadId}"] .card-note`, { hasText: "also put in the chat" }).waitFor();
    await frame.locator("#offer").waitFor({ state: "hidden" });

    // The person sends it; the reader sends no second ask: the agent finds exactly one.
    await reader.page.locator("#chat-send").click();
    await reader.page.locator("#chat li", { hasText: "Is anyone there?" }).waitFor();
    const { messages } = structured<{ messages: unknown[] }>(
      await rig.agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: reader.channelId } }),
    );
    assert.deepEqual(messages, [], "the ask was read once above; nothing new came from the offer");
    // An agent that answers listens, hello or not (the plugin's wake hook answers without one).
    await reader.answer(threadId, "Yes, now.", "Yes, now.");
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.page.close();
  });

  test("a document the plugin's agent opened shows the agent listening at once, and after a reload", async () => {
    // The plugin's server (`serve --wake hook`), as Claude Code opens it: its hook wakes
    // the agent for every message of the channel, so nobody needs to say hello.
    const plugin = await connectServer(rig.dataDir, {}, { ...AS_CLAUDE_CODE, args: ["--wake", "hook"] });
    try {
      const opened = structured<{ channel_id: string }>(
        await plugin.callTool({ name: "open_reader", arguments: { title: "Hooked", markdown: "# Hooked\n\nThe hook wakes the agent.\n" } }),
      );
      const reader = await rig.open({ query: "?agent=off", hash: opened.channel_id });
      await (await reader.frame()).locator("#presence", { hasText: "Agent is listening" }).waitFor();
      await reader.page.reload();
      await (await reader.frame()).locator("#presence", { hasText: "Agent is listening" }).waitFor();
      await reader.page.close();
    } finally {
      await plugin.close();
    }
    // One opened by an agent that must poll waits for it to act.
    const polled = await rig.open({ query: "?agent=off", hash: await rig.openDocument("# Polled\n\nNobody greets.\n", "Polled") });
    await (await polled.frame()).locator("#presence", { hasText: "Waiting for the agent" }).waitFor();
    await polled.page.close();
  });

  test("an agent that said hello and then went quiet lapses", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    await reader.nextMessage("ready");
    await reader.notify("hello", {});
    const frame = await reader.frame();
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.selectAndAsk("sequence number");
    await reader.submit("Still there?");
    await reader.nextMessage("ask");
    await frame.locator("#presence", { hasText: "The agent has not answered yet" }).waitFor({ timeout: 40_000 });
    assert.equal(await frame.locator("#offer-button").isVisible(), true);
    await reader.page.close();
  });

  test("the agent panel leaves the focus in the reader when a question arrives", async () => {
    const reader = await rig.open();
    const frame = await reader.frame();
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.selectAndAsk("sequence number");
    await reader.submit("First?");
    await reader.page.locator("#inbox li", { hasText: "First?" }).waitFor();
    assert.equal(await reader.page.evaluate(() => document.activeElement?.tagName), "IFRAME", "the page's focus is still in the reader");
    assert.equal(await frame.evaluate(() => document.activeElement?.tagName), "TEXTAREA", "and in the card's input");
    await reader.page.keyboard.type("Second");
    assert.equal(await frame.locator(".card textarea").inputValue(), "Second", "what the person types lands in the reader");
    await reader.page.close();
  });

  test("nothing failed in the pages", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
