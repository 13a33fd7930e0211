/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * An answer cut short in a card, in Chromium through the playground, measured: a
 * compact card (not in use) and a capped long answer cut their text between two lines,
 * never through one, and show a "Show more" that a pointer, the keyboard and a screen
 * reader can use; light, dark and narrow.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Frame } from "playwright-core";
import { browserSkipReason } from "./support/helpers.js";
import { type OpenOptions, type ReaderPage, type ReaderRig, readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

/**
 * An answer with a short paragraph, then a list: the list's first line starts one
 * paragraph margin below the first line, so a cut at a fixed number of lines' height
 * (2 x 1.6 em) goes through it, however wide the card.
 */
const ANSWER =
  "A cursor names a point.\n\n- every message at or below it was read\n- a reader that lost a response asks again from the same point\n\n" +
  "So nothing is lost, and nothing is handled twice.";

/**
 * Over 700 characters (capped even in a card in use): a line, then a code block whose
 * lines (smaller, after the block's padding) do not line up with the text's, and do
 * not wrap, so a cut at a fixed height goes through one of them at any width.
 */
const LONG_ANSWER = `A cursor names a point.\n\n\`\`\`\n${Array.from(
  { length: 14 },
  (_, index) => `poll_agent_messages {"channel_id": "ch-1", "after": ${index}}  # reads seq ${index + 1} on`,
).join("\n")}\n\`\`\``;

/** What the page measures of an answer's cut and its "Show more" button (px, in the frame's viewport). */
interface CutGeometry {
  /** The answer's box is cut short (its content is taller than the box). */
  cut: boolean;
  /** The lower edge of the answer's box: where the cut is. */
  edge: number;
  /** Lines of text wholly above the edge, and wholly below it. */
  above: number;
  below: number;
  /** Lines the edge goes through (their glyphs cut in half). */
  through: { top: number; bottom: number; text: string }[];
  /** The button that says there is more: its text, whether it is what a point at its middle hits, its state. */
  more: { text: string; hit: boolean; visible: boolean; expanded: string | null; controls: string | null } | null;
  /** The answer's id (what the button's aria-controls names). */
  contentId: string;
}

/** Measures the cut of the last answer in the card of `threadId`. */
function measureCut(frame: Frame, threadId: string): Promise<CutGeometry> {
  return frame.evaluate((threadId) => {
    const card = document.querySelector<HTMLElement>(`.card[data-thread="${threadId}"]`)!;
    const answers = card.querySelectorAll<HTMLElement>(".message.agent");
    const item = answers[answers.length - 1]!;
    const content = item.querySelector<HTMLElement>(".message-text")!;
    content.scrollIntoView({ block: "center" });
    const edge = content.getBoundingClientRect().bottom;
    // Each line of text is a rectangle of a text node's range: the glyphs of one line.
    const lines: { top: number; bottom: number; text: string }[] = [];
    const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if ((node as Text).data.trim() === "") continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) {
        if (rect.height > 0) lines.push({ top: rect.top, bottom: rect.bottom, text: (node as Text).data.slice(0, 30) });
      }
    }
    const button = item.querySelector<HTMLButtonElement>(".message-more");
    let more: CutGeometry["more"] = null;
    if (button) {
      const box = button.getBoundingClientRect();
      const style = getComputedStyle(button);
      const hitAt = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      more = {
        text: button.textContent ?? "",
        hit: hitAt === button,
        visible: !button.hidden && box.width > 0 && box.height > 0 && style.visibility === "visible" && Number(style.opacity) === 1,
        expanded: button.getAttribute("aria-expanded"),
        controls: button.getAttribute("aria-controls"),
      };
    }
    return {
      cut: content.scrollHeight > content.clientHeight + 1,
      edge,
      above: lines.filter((line) => line.bottom <= edge + 0.5).length,
      below: lines.filter((line) => line.top >= edge - 0.5).length,
      through: lines.filter((line) => line.top < edge - 0.5 && line.bottom > edge + 0.5),
      more,
      contentId: content.id,
    };
  }, threadId);
}

/** Asks about "sequence number", answers with `text` as the agent, and returns the thread's id once the answer shows. */
async function askAndAnswer(reader: ReaderPage, text: string): Promise<string> {
  await reader.selectAndAsk("sequence number");
  await reader.submit("What is a cursor for?");
  const { message } = await reader.nextMessage("ask");
  const threadId = String(message.data.thread_id);
  await reader.answer(threadId, text, "A cursor names");
  return threadId;
}

/** Moves the focus out of the card `card` (a selector) into the document, and waits until the card is compact. */
async function leaveCard(frame: Frame, card: string): Promise<void> {
  await frame.locator("#doc [data-block]").first().click();
  await frame.locator(`${card}.idle`).waitFor();
}

/** A new page (`options`) with a thread asked and answered with {@link ANSWER}, its card compact. */
async function withCompactCard(rig: ReaderRig, options: OpenOptions = { query: "?agent=off" }) {
  const reader = await rig.open(options);
  const frame = await reader.frame();
  const threadId = await askAndAnswer(reader, ANSWER);
  const card = `.card[data-thread="${threadId}"]`;
  await leaveCard(frame, card);
  return { reader, frame, threadId, card };
}

/** Asserts that the answer is cut between two lines, with lines on both sides, and a visible "Show more" for it. */
function assertCutBetweenLines(geometry: CutGeometry, what: string): void {
  assert.equal(geometry.cut, true, `${what}: the answer is cut short`);
  assert.deepEqual(geometry.through, [], `${what}: the cut at ${geometry.edge} px goes through no line`);
  assert.ok(geometry.above >= 1, `${what}: whole lines show above the cut`);
  assert.ok(geometry.below >= 1, `${what}: lines are left below it`);
  assert.ok(geometry.more, `${what}: a button says there is more`);
  assert.equal(geometry.more.text, "Show more", what);
  assert.equal(geometry.more.visible, true, `${what}: "Show more" is visible`);
  assert.equal(geometry.more.hit, true, `${what}: nothing covers "Show more"`);
  assert.equal(geometry.more.expanded, "false", `${what}: a screen reader hears it is collapsed`);
  assert.equal(geometry.more.controls, geometry.contentId, `${what}: it names the answer it shows`);
}

describe("an answer cut short in a card", { skip, timeout: 180_000 }, () => {
  const rig = readerRigForSuite();

  const views = [
    { name: "light", query: "?agent=off", width: 1280 },
    { name: "dark", query: "?agent=off&theme=dark", width: 1280 },
    { name: "narrow", query: "?agent=off", width: 390 },
  ];
  for (const view of views) {
    test(`${view.name}: a compact card cuts its answer between two lines and says "Show more", which shows the whole answer`, async () => {
      const { reader, frame, threadId, card: selector } = await withCompactCard(rig, { query: view.query, width: view.width, height: 900 });
      const card = frame.locator(selector);
      assertCutBetweenLines(await measureCut(frame, threadId), `${view.name}, compact`);

      // A button a screen reader finds by its role and name.
      await card.getByRole("button", { name: "Show more" }).click();
      await frame.locator(`.card[data-thread="${threadId}"]:not(.idle)`).waitFor();
      const whole = await measureCut(frame, threadId);
      assert.equal(whole.cut, false, "the whole answer shows");
      assert.equal(whole.below, 0);
      assert.equal(whole.more?.visible ?? false, false, "nothing more to show: no button");
      assert.equal(
        await frame.evaluate(() => document.activeElement?.id),
        whole.contentId,
        "the focus is on the answer, where a screen reader reads on",
      );
      await reader.page.close();
    });
  }

  test("a card restored by a reload (made before it is placed) is cut the same way", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const threadId = await askAndAnswer(reader, ANSWER);
    await reader.page.reload();
    const frame = await reader.frame();
    await frame.locator(`.card.idle[data-thread="${threadId}"] .message.agent`).waitFor();
    assertCutBetweenLines(await measureCut(frame, threadId), "restored");
    await reader.page.close();
  });

  test("the keyboard: the focus entering a compact card shows its answer whole; a screen reader's focus on its Show more does too", async () => {
    const { reader, frame, threadId, card } = await withCompactCard(rig);
    await frame.locator(`${card} .card-toggle`).focus();
    assert.equal((await measureCut(frame, threadId)).cut, false, "Tab into the card: the answer is whole");

    await leaveCard(frame, card);
    assert.equal((await measureCut(frame, threadId)).cut, true);
    await frame.locator(`${card} .message-more`).focus();
    const whole = await measureCut(frame, threadId);
    assert.equal(whole.cut, false, "focusing Show more shows the answer");
    assert.equal(await frame.evaluate(() => document.activeElement?.id), whole.contentId, "and the focus is not lost with the button");
    await reader.page.close();
  });

  test("a press on a compact card's Collapse leaves it compact until the click, which collapses it", async () => {
    const { reader, frame, card } = await withCompactCard(rig);
    const toggle = frame.locator(`${card} .card-toggle`);
    await toggle.scrollIntoViewIfNeeded();
    const box = (await toggle.boundingBox())!;
    await reader.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await reader.page.mouse.down();
    // Made whole now, the card would grow and be placed again, and the button would leave the pointer.
    assert.equal(await frame.locator(`${card}.idle`).count(), 1, "still compact while the button is pressed");
    await reader.page.mouse.up();
    await frame.locator(`${card}.collapsed`).waitFor();
    await reader.page.close();
  });

  test("a long answer in a card in use is capped between two lines; Show more and Show less toggle it", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    await reader.selectAndAsk("sequence number");
    await reader.submit("Tell me everything?");
    const { message } = await reader.nextMessage("ask");
    const threadId = String(message.data.thread_id);
    await reader.answer(threadId, LONG_ANSWER, "reads seq 14");
    const card = frame.locator(`.card[data-thread="${threadId}"]`);
    // The card is in use: its input has the focus.
    await card.locator("textarea").focus();
    const capped = await measureCut(frame, threadId);
    assertCutBetweenLines(capped, "capped");
    assert.ok(capped.above >= 5, `a capped answer shows several lines (${capped.above})`);
    await card.getByRole("button", { name: "Show more" }).click();
    const whole = await measureCut(frame, threadId);
    assert.equal(whole.cut, false);
    assert.equal(whole.more?.text, "Show less");
    assert.equal(whole.more?.expanded, "true");
    await card.getByRole("button", { name: "Show less" }).click();
    assertCutBetweenLines(await measureCut(frame, threadId), "capped again");
    await reader.page.close();
  });

  test("nothing failed in the pages", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
