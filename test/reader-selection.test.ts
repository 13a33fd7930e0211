/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * Selecting a passage with the mouse, in Chromium through the playground: a real drag
 * (mouse down, moves, up) that starts and ends inside words grows to the whole words it
 * touches, in both directions, and that is what the Ask button names and the agent gets;
 * a drag within one word stays as it is.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Frame, Page } from "playwright-core";
import { browserSkipReason } from "./support/helpers.js";
import { readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

/** The paragraph of the playground's sample the drags are made in. */
const PARAGRAPH = "A message carries a sequence number that grows by one";

/** A caret position: just inside side `side` ("before" or "after") of the character at `offset` of `word`'s first occurrence in the paragraph. */
interface Caret {
  word: string;
  offset: number;
  side: "before" | "after";
}

/**
 * Where on the page (px) the carets `from` and `to` are, at their characters' middle
 * height, once the host has given the reader the height it asked for, measured together
 * after the paragraph is scrolled into view. On a loaded machine the page can still hold
 * the frame at its first 200 px when the reader is in: the frame's growing then moves the
 * scrolled paragraph, and a clean-clone CI run once found a drag's start above it.
 */
async function caretPoints(page: Page, frame: Frame, from: Caret, to: Caret): Promise<[{ x: number; y: number }, { x: number; y: number }]> {
  // The frame is as tall as the reader's page (its 1 px borders aside), as e2e-apps checks of the app shell.
  await frame.waitForFunction(() => Math.abs(window.innerHeight - document.documentElement.getBoundingClientRect().height) <= 2);
  const [start, end] = await frame.evaluate(
    ({ paragraph, carets }) => {
      const block = [...document.querySelectorAll<HTMLElement>("#doc [data-block]")].find((element) => element.textContent?.includes(paragraph))!;
      block.scrollIntoView({ block: "center" });
      return carets.map(({ word, offset, side }) => {
        const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
          const at = node.data.indexOf(word);
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at + offset);
          range.setEnd(node, at + offset + 1);
          const rect = range.getBoundingClientRect();
          return { x: side === "before" ? rect.left + 1 : rect.right - 1, y: rect.top + rect.height / 2 };
        }
        throw new Error(`no text node holds ${word}`);
      });
    },
    { paragraph: PARAGRAPH, carets: [from, to] },
  );
  const origin = await page.locator("#frame iframe").evaluate((element) => ({
    x: element.getBoundingClientRect().left + element.clientLeft,
    y: element.getBoundingClientRect().top + element.clientTop,
  }));
  const onPage = (point: { x: number; y: number }) => ({ x: origin.x + point.x, y: origin.y + point.y });
  return [onPage(start!), onPage(end!)];
}

/** Drags the mouse from caret `fromCaret` to `toCaret`, as a person selects. */
async function drag(page: Page, frame: Frame, fromCaret: Caret, toCaret: Caret): Promise<void> {
  const [from, to] = await caretPoints(page, frame, fromCaret, toCaret);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 8 });
  await page.mouse.up();
}

/** The selection's text once it is `expected` (its text after 5 s otherwise), and whether it runs backwards (focus before anchor). */
async function selectionOnce(frame: Frame, expected: string): Promise<{ text: string; backwards: boolean }> {
  await frame.waitForFunction((expected) => document.getSelection()?.toString() === expected, expected, { timeout: 5_000 }).catch(() => undefined);
  return frame.evaluate(() => {
    const selection = document.getSelection()!;
    const range = document.createRange();
    range.setStart(selection.anchorNode!, selection.anchorOffset);
    range.setEnd(selection.focusNode!, selection.focusOffset);
    return { text: selection.toString(), backwards: range.collapsed && !selection.isCollapsed };
  });
}

describe("selecting a passage with the mouse", { skip, timeout: 120_000 }, () => {
  const rig = readerRigForSuite();

  test("a drag from inside one word to inside another grows to the whole words, and the agent is asked about them", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    // From the last letter of "carries" to the first of "one": "s a sequence number that grows by o".
    await drag(reader.page, frame, { word: "carries", offset: 6, side: "before" }, { word: "one", offset: 0, side: "after" });
    const selected = await selectionOnce(frame, "carries a sequence number that grows by one");
    assert.equal(selected.text, "carries a sequence number that grows by one");
    assert.equal(selected.backwards, false);
    await frame.locator("#ask", { hasText: "Ask about this passage" }).waitFor();
    await frame.locator("#ask").click();
    await frame.locator(".card:has(textarea:focus)").waitFor();
    await reader.submit("What grows?");
    const { message } = await reader.nextMessage("ask");
    assert.equal(message.data.quote, "carries a sequence number that grows by one", "the agent gets the whole words");
    await reader.page.close();
  });

  test("a drag backwards grows the same way and still runs backwards; a drag within one word stays as it is", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    await drag(reader.page, frame, { word: "number", offset: 2, side: "after" }, { word: "sequence", offset: 3, side: "before" });
    const backwards = await selectionOnce(frame, "sequence number");
    assert.equal(backwards.text, "sequence number");
    assert.equal(backwards.backwards, true, "a Shift+click then moves the end the drag ended at");
    await frame.locator("#ask", { hasText: "Ask about these words" }).waitFor();

    // "ssag" of "message": part of one word, on purpose (away from the selection, which a press inside would drag).
    await drag(reader.page, frame, { word: "message", offset: 2, side: "before" }, { word: "message", offset: 5, side: "after" });
    assert.equal((await selectionOnce(frame, "ssag")).text, "ssag");
    await frame.locator("#ask", { hasText: "Ask about this word" }).waitFor();
    await reader.page.close();
  });

  test("nothing failed in the pages", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
