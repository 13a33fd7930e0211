/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The reader with the keyboard alone, in Chromium through the playground: from the
 * page's first Tab to asking about a paragraph and a sentence, reading the answers,
 * following up and moving between threads, with no mouse and no caret browsing. Every
 * key pressed (other than the characters of the questions) is counted, and the count
 * is printed: that is the number the docs quote.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { browserSkipReason } from "./support/helpers.js";
import { ReaderRig, type ReaderPage } from "./support/reader-page.js";

const skip = browserSkipReason();

describe("the reader with the keyboard alone", { skip, timeout: 120_000 }, () => {
  const rig = new ReaderRig();
  let reader: ReaderPage;
  let keystrokes = 0;

  /** Presses `key` (`times` times) on the page, wherever the focus is, and counts it. */
  async function press(key: string, times = 1): Promise<void> {
    for (let i = 0; i < times; i += 1) {
      await reader.page.keyboard.press(key);
      keystrokes += 1;
    }
  }

  /** What has the focus inside the reader: tag, class and text (first 40 characters). */
  async function focused(): Promise<{ tag: string; className: string; text: string; thread?: string }> {
    const frame = await reader.frame();
    return frame.evaluate(() => {
      const element = document.activeElement as HTMLElement;
      return {
        tag: element.tagName.toLowerCase(),
        className: element.className,
        text: (element.textContent ?? "").slice(0, 40),
        thread: element.closest<HTMLElement>(".card")?.dataset.thread ?? element.dataset.thread,
      };
    });
  }

  before(async () => {
    await rig.start();
    reader = await rig.open({ query: "?agent=off" });
    await reader.nextMessage("ready");
    await reader.notify("hello", {});
  });
  after(async () => {
    await rig.stop();
  });

  test("the keys are listed where a person sees them", async () => {
    const frame = await reader.frame();
    assert.equal(await frame.locator("#hint").isVisible(), true, "a visible hint says how to ask");
    assert.match((await frame.locator("#hint").textContent()) ?? "", /Tab.*↑.*↓.*Enter/s);
    assert.equal(await frame.locator("#keys summary").isVisible(), true, "the list of all keys is one click or Tab away");
    assert.match((await frame.locator("#keys dl").textContent()) ?? "", /Alt/);
  });

  test("ask, read, follow up and move between threads, keyboard only", async () => {
    const frame = await reader.frame();
    // From the page's start: the playground's header (3 buttons), then the reader's skip link.
    await press("Tab", 4);
    assert.equal((await focused()).text, "Skip to the document");
    await press("Enter");
    assert.equal((await focused()).text, "How backchannel works", "the document's first block has the focus");

    await press("ArrowDown", 4);
    assert.match((await focused()).text, /^A message carries a sequence number/);
    assert.equal(await frame.locator("#ask").isVisible(), true, "a visible Ask button on the focused block");
    await press("Enter");
    assert.equal((await focused()).tag, "textarea", "Enter opened a card and put the focus in its input");
    await reader.page.keyboard.type("What is the cursor for?");
    await press("Enter");
    const first = (await reader.nextMessage("ask")).message.data;
    assert.match(String(first.quote), /^A message carries a sequence number.*on the way\.$/, "the whole block is the quote");
    const firstThread = String(first.thread_id);
    await reader.answer(firstThread, "It marks what the reader has **received**.", "It marks what the reader has");
    assert.equal((await focused()).tag, "textarea", "the focus stays in the card while the answer arrives");
    assert.equal(await frame.locator(`.card[data-thread="${firstThread}"] .card-log`).getAttribute("aria-live"), "polite", "answers are announced");

    await reader.page.keyboard.type("And after a reload?");
    await press("Enter");
    const followUp = (await reader.nextMessage("ask")).message.data;
    assert.equal(followUp.thread_id, firstThread);
    assert.equal((followUp.history as unknown[]).length, 2);
    await reader.answer(firstThread, "The same cursor gets the same messages again.", "same cursor");

    // Back to the passage, down two blocks, the second sentence, ask.
    await press("Escape");
    assert.equal((await focused()).tag, "mark", "Escape goes back to the highlighted passage");
    await press("ArrowDown", 2);
    assert.match((await focused()).text, /^The agent only acts during a turn/);
    await press("ArrowRight", 2);
    await press("Enter");
    await reader.page.keyboard.type("Which commands?");
    await press("Enter");
    const second = (await reader.nextMessage("ask")).message.data;
    assert.equal(second.quote, "The simplest is a watcher: a small command that exits the moment the app has written to the agent's queue.");
    const secondThread = String(second.thread_id);
    await reader.answer(secondThread, "`backchannel watch`.", "backchannel watch");

    // Between threads.
    await press("Alt+ArrowUp");
    assert.deepEqual([(await focused()).tag, (await focused()).thread], ["textarea", firstThread], "Alt+↑ goes to the thread above");
    await press("Alt+ArrowDown");
    assert.deepEqual([(await focused()).tag, (await focused()).thread], ["textarea", secondThread], "Alt+↓ goes to the thread below");

    process.stderr.write(
      `\nkeyboard-only flow (ask, read, follow up, a second thread, move between threads): ${keystrokes} keystrokes besides the questions' text\n`,
    );
    assert.ok(keystrokes <= 25, `the flow took ${keystrokes} keystrokes`);
  });

  test("highlights are tab stops that open their card; cards come in page order, each named by its passage", async () => {
    const frame = await reader.frame();
    const marks = frame.locator("mark.passage[tabindex='0']");
    assert.equal(await marks.count(), 2);
    await marks.first().focus();
    await reader.page.keyboard.press("Enter");
    const card = await focused();
    assert.equal(card.tag, "textarea");
    const order = await frame.evaluate(() => ({
      cards: [...document.querySelectorAll<HTMLElement>("#margin .card")].map((element) => element.dataset.thread),
      marks: [...document.querySelectorAll<HTMLElement>("mark.passage[tabindex='0']")].map((element) => element.dataset.thread),
      names: [...document.querySelectorAll<HTMLElement>("#margin .card")].map((element) => element.getAttribute("aria-label")),
    }));
    assert.deepEqual(order.cards, order.marks, "cards in the DOM (so in Tab order) as their passages in the page");
    assert.match(order.names[0] ?? "", /^Thread about “A message carries/);
    assert.match(order.names[1] ?? "", /^Thread about “The simplest is a watcher/);
  });

  test("nothing failed in the page", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
