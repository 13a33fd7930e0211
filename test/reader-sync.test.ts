/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * What a reader keeps across reloads and shares with another reader of its channel, in
 * Chromium through the playground: a second tab on the same channel shows a follow-up
 * asked in the first (the question, not only its answer), and a question typed but not
 * sent is still in its card after a reload, for a new passage and for a follow-up.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { browserSkipReason, structured } from "./support/helpers.js";
import { readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

const DOCUMENT = [
  "# Two tabs",
  "",
  "The first paragraph talks about queues and cursors, and a reader asks about it.",
  "",
  "The second paragraph talks about locks, which keep two writers apart.",
  "",
].join("\n");

interface StateResult {
  drafts: { thread_id: string; text: string }[];
}

describe("a reader's threads across tabs and reloads", { skip, timeout: 180_000 }, () => {
  const rig = readerRigForSuite();

  test("a second tab on the same channel shows a follow-up asked in the first, question and answer", async () => {
    const channelId = await rig.openDocument(DOCUMENT, "Two tabs");
    const first = await rig.open({ query: "?agent=off", hash: channelId });
    await first.nextMessage("ready");
    await first.selectAndAsk("queues and cursors");
    await first.submit("What is a cursor?");
    const threadId = String((await first.nextMessage("ask")).message.data.thread_id);
    await first.answer(threadId, "The last seq a reader has handled.", "last seq");

    const second = await rig.open({ query: "?agent=off", hash: channelId });
    const secondFrame = await second.frame();
    const secondCard = secondFrame.locator(`.card[data-thread="${threadId}"]`);
    await secondCard.locator(".message.agent", { hasText: "last seq" }).waitFor();

    const firstCard = (await first.frame()).locator(`.card[data-thread="${threadId}"]`);
    await firstCard.locator("textarea").fill("And who moves it?");
    await firstCard.locator("textarea").press("Enter");
    assert.equal((await first.nextMessage("ask")).message.data.question, "And who moves it?");
    await first.answer(threadId, "The reader, with every poll.", "every poll");

    // Both tabs poll the channel, so the second receives the answer too; it must show the question before it.
    await secondCard.locator(".message.agent", { hasText: "every poll" }).waitFor();
    await secondCard.locator(".message.user", { hasText: "And who moves it?" }).waitFor({ timeout: 10_000 });
    const texts = await secondCard.locator(".message").allTextContents();
    assert.deepEqual(
      texts.map((text) => text.trim()),
      ["What is a cursor?", "The last seq a reader has handled.", "And who moves it?", "The reader, with every poll."],
    );
    await first.page.close();
    await second.page.close();
  });

  test("a question typed but not sent is still in its card after a reload, for a new passage and for a follow-up", async () => {
    const channelId = await rig.openDocument(DOCUMENT, "Drafts");
    const reader = await rig.open({ query: "?agent=off", hash: channelId });
    await reader.nextMessage("ready");
    /** Resolves once the server has answered the reader's call that keeps `text` as a draft. */
    const draftSaved = (text: string) =>
      reader.page.waitForResponse((response) => {
        const body = response.request().postData() ?? "";
        return body.includes('"reader_record"') && body.includes('"draft"') && body.includes(text);
      });

    // A new passage: the card is not recorded anywhere yet, only its draft.
    await reader.selectAndAsk("two writers apart");
    let saved = draftSaved("Why only two?");
    await (await reader.frame()).locator(".card textarea:focus").fill("Why only two?");
    await saved;
    // A follow-up in a thread that has an answer.
    await reader.selectAndAsk("queues and cursors");
    await reader.submit("What is a cursor?");
    const threadId = String((await reader.nextMessage("ask")).message.data.thread_id);
    await reader.answer(threadId, "The last seq a reader has handled.", "last seq");
    saved = draftSaved("And after a crash?");
    await (await reader.frame()).locator(`.card[data-thread="${threadId}"] textarea`).fill("And after a crash?");
    await saved;

    await reader.page.reload();
    let frame = await reader.frame();
    const newCard = frame.locator(".card", { has: frame.locator(".card-quote", { hasText: "two writers apart" }) });
    assert.equal(await newCard.locator("textarea").inputValue(), "Why only two?");
    assert.equal(await frame.locator("mark.passage", { hasText: "two writers apart" }).count(), 1, "its passage is highlighted again");
    const followUp = frame.locator(`.card[data-thread="${threadId}"] textarea`);
    assert.equal(await followUp.inputValue(), "And after a crash?");

    // Sent, the draft is gone: the question is in the thread, and the input is empty after another reload.
    await followUp.press("Enter");
    assert.equal((await reader.nextMessage("ask")).message.data.question, "And after a crash?");
    const state = structured<StateResult>(await rig.agent.callTool({ name: "reader_state", arguments: { channel_id: channelId } }));
    assert.deepEqual(
      state.drafts.map((draft) => draft.text),
      ["Why only two?"],
      "recording the question dropped its draft",
    );
    await reader.page.reload();
    frame = await reader.frame();
    await frame.locator(`.card[data-thread="${threadId}"] .message.user`, { hasText: "And after a crash?" }).waitFor();
    assert.equal(await frame.locator(`.card[data-thread="${threadId}"] textarea`).inputValue(), "");
    await reader.page.close();
  });
});
