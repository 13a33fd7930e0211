/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * What a new user of the playground (`npm start`) meets, in Chromium through the real
 * playground server: where it keeps its channels, the agent panel after a page reload,
 * and the reader's cards and Ask button as a person reads them.
 */
import assert from "node:assert/strict";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { chromium } from "playwright-core";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, startPlayground, structured, tempDataDir, waitUntil } from "./support/helpers.js";
import { readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

describe("the playground as a new user meets it", { skip, timeout: 180_000 }, () => {
  const rig = readerRigForSuite();

  test("with no store chosen, it keeps its channels in a data directory of its own and says where", async () => {
    const temp = await tempDataDir();
    // The user's real data directory is $XDG_STATE_HOME/backchannel; the environment names no store.
    const state = join(temp.dir, "state");
    await mkdir(state);
    const playground = await startPlayground("", [], { BACKCHANNEL_HOME: "", XDG_STATE_HOME: state, HOME: join(temp.dir, "home") });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(playground.page("/"));
      await page.locator("#channel", { hasText: /^ch-/ }).waitFor();
      const channelId = (await page.locator("#channel").textContent())!;
      const own = join(state, "backchannel-playground");
      assert.deepEqual(await readdir(join(own, "channels")), [channelId], "the sample's channel is in the playground's own directory");
      assert.deepEqual(await readdir(state), ["backchannel-playground"], "nothing in the user's real data directory");
      assert.match(playground.stderr(), new RegExp(`data in ${own.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(the playground's own`));
      assert.match((await page.locator("#watch").textContent()) ?? "", new RegExp(`--home ${own}`), "an outside agent is told where to look");
      // Also for the channel a reload shows again, which no open_reader result names.
      await page.goto(playground.page(`/?agent=off#${channelId}`));
      await page.locator("#watch", { hasText: channelId }).waitFor();
      assert.match((await page.locator("#watch").textContent()) ?? "", new RegExp(` watch ${channelId} --home ${own}$`));
    } finally {
      await browser.close();
      await playground.stop();
      await temp.cleanup();
    }
  });

  test("after a reload, the agent panel lists the unanswered question, and answering it reaches the reader", async () => {
    const reader = await rig.open();
    const frame = await reader.frame();
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.selectAndAsk("sequence number");
    await reader.submit("Answered before the reload?");
    const first = reader.page.locator("#inbox li", { hasText: "Answered before the reload?" });
    await first.locator("textarea").fill("Yes.");
    await first.locator("button", { hasText: "Send answer" }).click();
    await frame.locator(".card .message.agent", { hasText: "Yes." }).waitFor();
    await reader.selectAndAsk("two queues");
    await reader.submit("Still waiting after the reload?");
    await reader.page.locator("#inbox li", { hasText: "Still waiting after the reload?" }).waitFor();

    await reader.page.reload();
    const after = await reader.frame();
    await after.locator(".card .message.user", { hasText: "Still waiting after the reload?" }).waitFor();
    const waiting = reader.page.locator("#inbox li", { hasText: "Still waiting after the reload?" });
    await waiting.locator("textarea").waitFor();
    assert.equal(await reader.page.locator("#inbox li textarea").count(), 1, "only the unanswered question asks for an answer");
    await waiting.locator("textarea").fill("**Yes**, and now it has an answer.");
    await waiting.locator("button", { hasText: "Send answer" }).click();
    await after.locator(".card .message.agent strong", { hasText: "Yes" }).waitFor();
    // The panel shows the answer as the reader does: markdown rendered, not its source.
    assert.equal(await waiting.locator(".answered strong").textContent(), "Yes");
    assert.doesNotMatch((await waiting.textContent()) ?? "", /\*\*/);
    await reader.page.close();
  });

  test("the agent panel renders an answer's markdown without running its HTML", async () => {
    const reader = await rig.open();
    const frame = await reader.frame();
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await reader.selectAndAsk("doorbell");
    await reader.submit("Safe?");
    const item = reader.page.locator("#inbox li", { hasText: "Safe?" });
    await item.locator("textarea").fill('<img src=x onerror="document.title=1"> `code`');
    await item.locator("button", { hasText: "Send answer" }).click();
    await item.locator(".answered code", { hasText: "code" }).waitFor();
    assert.equal(await item.locator(".answered img").count(), 0, "raw HTML stays text");
    assert.match((await item.locator(".answered").textContent()) ?? "", /<img src=x/);
    await reader.page.close();
  });

  test("the Ask button's label fits what is selected", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    const select = (text: string, focusBlock: boolean) =>
      frame.evaluate(
        ({ text, focusBlock }) => {
          const block = [...document.querySelectorAll<HTMLElement>("#doc [data-block]")].find((element) => element.textContent?.includes(text))!;
          if (focusBlock) {
            // As a click into the paragraph leaves it: the paragraph has the keyboard focus.
            block.tabIndex = 0;
            block.focus();
          } else (document.activeElement as HTMLElement | null)?.blur();
          const node = [...block.childNodes].find((child) => child.nodeType === Node.TEXT_NODE && child.textContent!.includes(text))!;
          const start = node.textContent!.indexOf(text);
          const range = document.createRange();
          range.setStart(node, start);
          range.setEnd(node, start + text.length);
          document.getSelection()!.removeAllRanges();
          document.getSelection()!.addRange(range);
        },
        { text, focusBlock },
      );
    /** The label once it is `expected`, else what it says after 5 s. */
    const label = async (expected: string) => {
      const exactly = new RegExp(`^${expected.replace(/[()]/g, "\\$&")}$`);
      await frame
        .locator("#ask", { hasText: exactly })
        .waitFor({ timeout: 5_000 })
        .catch(() => undefined);
      return frame.locator("#ask").textContent();
    };
    await select("sequence number", true);
    assert.equal(await label("Ask about these words (Enter)"), "Ask about these words (Enter)");
    await select("The agent only acts during a turn, so something has to give it one.", true);
    assert.equal(await label("Ask about this sentence (Enter)"), "Ask about this sentence (Enter)");
    await select("doorbell", false);
    assert.equal(await label("Ask about this word"), "Ask about this word");
    await reader.page.close();
  });

  test("a waiting card stands out, says so to screen readers, and the header counts the waiting questions", async () => {
    const reader = await rig.open({ query: "?agent=off" });
    const frame = await reader.frame();
    assert.equal(await frame.locator("#waiting-count").textContent(), "");
    await reader.selectAndAsk("sequence number");
    await reader.submit("One?");
    const { message: one } = await reader.nextMessage("ask");
    await reader.selectAndAsk("doorbell");
    await reader.submit("Two?");
    const { message: two } = await reader.nextMessage("ask");
    const count = frame.locator("#waiting-count");
    await count.filter({ hasText: "2 questions waiting" }).waitFor();
    assert.equal(await count.getAttribute("role"), "status");

    const first = frame.locator(`.card[data-thread="${String(one.data.thread_id)}"]`);
    const second = frame.locator(`.card[data-thread="${String(two.data.thread_id)}"]`);
    assert.equal(await first.locator(".card-state[role=status]").textContent(), "Waiting for an answer");
    await reader.answer(String(one.data.thread_id), "One.", "One.");
    await count.filter({ hasText: /^1 question waiting$/ }).waitFor();
    assert.equal(await first.locator(".card-state[role=status]").textContent(), "Answered");
    const look = (card: typeof first) =>
      card.evaluate((element) => {
        const style = getComputedStyle(element);
        return { left: style.borderLeftWidth, color: style.borderLeftColor };
      });
    const [answered, waiting] = [await look(first), await look(second)];
    assert.notEqual(waiting.left, answered.left, "a waiting card's edge is wider");
    assert.notEqual(waiting.color, answered.color, "and in another colour");
    await reader.answer(String(two.data.thread_id), "Two.", "Two.");
    await frame.waitForFunction(() => document.getElementById("waiting-count")?.textContent === "");
    await reader.page.close();
  });

  test("with many threads, each card stays beside its passage, or as near as the cards around it allow", async () => {
    const paragraphs = Array.from(
      { length: 16 },
      (_, i) =>
        `Paragraph ${i} says something about channels and queues. It is long enough to wrap onto a second line of the reader's text column, ` +
        "and onto a third one too, as the paragraphs of a manual do.",
    );
    const channelId = await rig.openDocument(`# Many threads\n\n${paragraphs.join("\n\n")}\n`, "Many threads");
    // Answered threads on every other paragraph (1, 3, …, 9), then on four paragraphs in a row (12–15).
    const spread = [1, 3, 5, 7, 9];
    const dense = [12, 13, 14, 15];
    for (const i of [...spread, ...dense]) {
      for (const [n, role, text] of [
        [0, "user", `What does paragraph ${i} say?`],
        [1, "agent", `Paragraph ${i} says something about channels and queues: a sentence long enough to wrap in a card.`],
      ] as const) {
        await rig.agent.callTool({
          name: "reader_record",
          arguments: {
            channel_id: channelId,
            thread_id: `t-${i}`,
            quote: "something",
            paragraph: paragraphs[i],
            anchor: { block: i + 1, start: 15, end: 24 },
            message: { id: `m-${i}-${n}`, role, text },
          },
        });
      }
    }
    const reader = await rig.open({ query: "?agent=off", hash: channelId, width: 1280, height: 900 });
    const frame = await reader.frame();
    await frame
      .locator("#margin .card")
      .nth(spread.length + dense.length - 1)
      .waitFor();
    type Row = { thread: string; top: number; bottom: number; passage: number };
    const measure = () =>
      frame.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>("#margin .card")].map((card) => {
          const box = card.getBoundingClientRect();
          const passage = document.querySelector(`mark[data-thread="${card.dataset.thread}"]`)!.getBoundingClientRect().top;
          return { thread: card.dataset.thread!, top: box.top, bottom: box.bottom, passage };
        }),
      );
    const near = (rows: Row[]) =>
      rows.filter((row) => spread.includes(Number(row.thread.slice(2)))).every((row) => Math.abs(row.top - row.passage) <= 24);
    let rows = await measure();
    const settled = async () => {
      rows = await measure();
      return near(rows);
    };
    // On time-out the assertion below says where the cards are.
    await waitUntil(settled, "every spread card beside its passage", { timeoutMs: 5_000, intervalMs: 100 }).catch(() => undefined);
    const shown = JSON.stringify(rows.map(({ thread, top, passage }) => ({ thread, top: Math.round(top), passage: Math.round(passage) })));
    // Passages about 230 px apart leave room for every card beside its passage.
    assert.ok(near(rows), `a card of the spread threads is more than 24 px from its passage: ${shown}`);
    for (const [index, row] of rows.entries()) {
      if (index > 0) assert.ok(row.top >= rows[index - 1]!.bottom, `cards overlap: ${shown}`);
    }
    // Four passages in a row have less room than their cards need: the run spreads around them, none is far off.
    const height = rows[0]!.bottom - rows[0]!.top;
    for (const row of rows.filter((each) => dense.includes(Number(each.thread.slice(2)))))
      assert.ok(Math.abs(row.top - row.passage) <= 1.5 * height, `a card of the dense threads drifted from its passage: ${shown}`);
    await reader.page.close();
  });

  test("a reload keeps the reading position of a long document", async () => {
    const sections = Array.from({ length: 400 }, (_, i) => `## Section ${i}\n\nSection ${i} says something about channels, queues and the agent.`);
    const channelId = await rig.openDocument(`# A long manual\n\n${sections.join("\n\n")}\n`, "A long manual");
    // Blocks: the title, then each section's heading and paragraph.
    const block = 1 + 2 * 350;
    const reader = await rig.open({ query: "?agent=off", hash: channelId });
    const frame = await reader.frame();
    await frame.evaluate(() => {
      const heading = [...document.querySelectorAll("#doc h2")].find((element) => element.textContent === "Section 350")!;
      const scroller = document.getElementById("scroller")!;
      scroller.scrollTop += heading.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
    });
    const kept = async () =>
      structured<{ position?: { block: number } | null }>(await rig.agent.callTool({ name: "reader_state", arguments: { channel_id: channelId } }))
        .position?.block;
    await waitUntil(async () => (await kept()) === block, "the block at the top kept", { intervalMs: 200 });

    await reader.page.reload();
    const after = await reader.frame();
    const atTop = () =>
      after.evaluate(() => {
        const heading = [...document.querySelectorAll("#doc h2")].find((element) => element.textContent === "Section 350")!;
        return Math.round(heading.getBoundingClientRect().top - document.getElementById("scroller")!.getBoundingClientRect().top);
      });
    await after
      .waitForFunction(
        () => {
          const heading = [...document.querySelectorAll("#doc h2")].find((element) => element.textContent === "Section 350");
          const top = document.getElementById("scroller")!.getBoundingClientRect().top;
          return heading !== undefined && Math.abs(heading.getBoundingClientRect().top - top) < 4;
        },
        undefined,
        { timeout: 10_000 },
      )
      .catch(() => undefined);
    assert.ok(Math.abs(await atTop()) < 4, `Section 350 is at the top again, not ${await atTop()} px from it`);
    await reader.page.close();
  });

  test("the agent panel's layout: an answer's list unboxed, the chat box in view at 900 px, a long command's words kept whole inside the panel", async () => {
    for (const width of [1280, 1400]) {
      const reader = await rig.open({ width, height: 900 });
      // The chat box shows without scrolling, below the reader, as a chat's input does.
      const box = await reader.page.locator("#chat-input").boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= 900, `${width}×900: the chat box is in view (${JSON.stringify(box)})`);
      if (width === 1280) {
        const frame = await reader.frame();
        await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
        await reader.selectAndAsk("doorbell");
        await reader.submit("Which ones?");
        const item = reader.page.locator("#inbox > li", { hasText: "Which ones?" });
        await item.locator("textarea").fill("- one\n- two\n- three");
        await item.locator("button", { hasText: "Send answer" }).click();
        await item.locator(".answered li", { hasText: "three" }).waitFor();
        // A list item of an answer is a line of text: no border of its own (offset and client boxes alike), its lines close together.
        const boxes = await item
          .locator(".answered li")
          .evaluateAll((items) =>
            items.map((li) => ({ border: (li as HTMLElement).offsetHeight - li.clientHeight, top: li.getBoundingClientRect().top })),
          );
        assert.deepEqual(
          boxes.map(({ border }) => border),
          [0, 0, 0],
          "no list item of the answer is boxed",
        );
        const lineHeight = await item
          .locator(".answered li")
          .first()
          .evaluate((li) => li.getBoundingClientRect().height);
        assert.ok(boxes[2]!.top - boxes[0]!.top <= 2 * lineHeight + 4, `the items follow each other line by line (${JSON.stringify(boxes)})`);
      }
      await reader.page.close();
    }

    // ?agent=off, on a data directory with a long path: the command for another agent stays in the panel, its options whole.
    const temp = await tempDataDir();
    const home = join(temp.dir, "a-rather-long-folder-name-for-notes", "and-another-one-inside-it-with-dashes");
    const playground = await startPlayground("", ["--home", home]);
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      for (const width of [1280, 390]) {
        const page = await browser.newPage({ viewport: { width, height: 844 } });
        await page.goto(playground.page("/?agent=off"));
        await page.locator("#watch", { hasText: "--home" }).waitFor();
        const hint = (await page.locator("#page-hint").textContent()) ?? "";
        assert.doesNotMatch(hint, /playing the agent/, `${width}: with ?agent=off the header says no one here plays the agent: ${hint}`);
        const geometry = await page.evaluate(() => {
          const panel = document.getElementById("agent")!.getBoundingClientRect();
          const code = document.getElementById("watch")!;
          const text = code.firstChild!;
          // Each word of the command (the path with its dashes, --home) on the lines it spans.
          const broken = [...text.textContent!.matchAll(/\S+/g)].flatMap((match) => {
            const range = document.createRange();
            range.setStart(text, match.index);
            range.setEnd(text, match.index + match[0].length);
            return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1 ? [match[0]] : [];
          });
          const box = code.getBoundingClientRect();
          return { panelLeft: panel.left, panelRight: panel.right, left: box.left, right: box.right, broken };
        });
        assert.ok(
          geometry.left >= geometry.panelLeft && geometry.right <= geometry.panelRight,
          `${width}: the command stays inside the panel (${JSON.stringify(geometry)})`,
        );
        assert.deepEqual(geometry.broken, [], `${width}: no word of the command is broken across lines`);
        await page.close();
      }
    } finally {
      await browser.close();
      await playground.stop();
      await temp.cleanup();
    }
  });

  test("nothing failed in the pages", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
