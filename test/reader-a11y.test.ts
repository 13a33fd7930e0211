/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * axe-core (a pinned dev dependency) in Chromium on the reader in each of its states —
 * loaded, asking (a card open for a question), waiting, answered with code and tables,
 * no agent (the offer), dark, narrow, wide — and on the playground page in both themes.
 * No violation of impact "serious" or "critical" may remain; lesser ones are printed.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";
import type { Frame, Page } from "playwright-core";
import { browserSkipReason } from "./support/helpers.js";
import { ReaderRig, type ReaderPage } from "./support/reader-page.js";

const skip = browserSkipReason();

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

const ANSWER = [
  "It orders the messages. In short:",
  "",
  "| field | meaning |",
  "|---|---|",
  "| seq | grows by one, never reused |",
  "| ts | when it was written |",
  "",
  "```ts",
  "const { messages, cursor } = await poll({ channel_id, after: cursor, wait_ms: 25_000 }); // a line long enough to scroll sideways in a card",
  "```",
].join("\n");

describe("accessibility of the reader and the playground (axe-core)", { skip, timeout: 180_000 }, () => {
  const rig = new ReaderRig();
  let axeSource: string;
  const minor: string[] = [];

  /** Runs axe in `target` (the page or the reader's frame) and returns the serious and critical violations. */
  async function audit(target: Page | Frame, state: string): Promise<string[]> {
    await target.evaluate(axeSource);
    const { violations, passed } = await target.evaluate(async () => {
      type Result = { violations: Violation[]; passes: unknown[] };
      const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<Result> } }).axe;
      const result = await axe.run(document, { resultTypes: ["violations"] });
      return {
        passed: result.passes.length,
        violations: result.violations.map(({ id, impact, help, nodes }) => ({
          id,
          impact,
          help,
          nodes: nodes.map((node) => ({ target: node.target })),
        })),
      };
    });
    // axe really looked: on these pages dozens of its rules apply and pass.
    assert.ok(passed >= 10, `${state}: axe checked ${passed} rules only`);
    for (const violation of violations.filter((candidate) => candidate.impact !== "serious" && candidate.impact !== "critical")) {
      minor.push(`${state}: ${violation.impact} ${violation.id} (${violation.help})`);
    }
    return violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map(
        (violation) =>
          `${state}: ${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
      );
  }

  /** A reader on the sample, with one thread asked and (when `answered`) answered with a table and code. */
  async function readerWithThread(options: { width?: number; answered?: boolean; query?: string }): Promise<ReaderPage> {
    const reader = await rig.open({ query: options.query ?? "?agent=off", width: options.width ?? 1280 });
    await reader.nextMessage("ready");
    await reader.notify("hello", {});
    await reader.selectAndAsk("sequence number");
    await reader.submit("What is it for?");
    const { message } = await reader.nextMessage("ask");
    if (options.answered) await reader.answer(String(message.data.thread_id), ANSWER, "It orders the messages");
    return reader;
  }

  before(async () => {
    axeSource = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
    await rig.start();
  });
  after(async () => {
    if (minor.length > 0) process.stderr.write(`\naxe, minor and moderate findings (allowed):\n  ${[...new Set(minor)].join("\n  ")}\n`);
    await rig.stop();
  });

  test("the reader loaded, asking, waiting and answered with code and tables; the playground", async () => {
    const found: string[] = [];
    const reader = await rig.open({ query: "?agent=off" });
    found.push(...(await audit(await reader.frame(), "loaded")));
    found.push(...(await audit(reader.page, "playground")));
    await reader.selectAndAsk("sequence number");
    found.push(...(await audit(await reader.frame(), "asking")));
    await reader.submit("What is it for?");
    const { message } = await reader.nextMessage("ask");
    found.push(...(await audit(await reader.frame(), "waiting")));
    // No hello on this channel: after a few seconds the no-agent offer shows.
    await (await reader.frame()).locator("#offer-button").waitFor({ timeout: 15_000 });
    found.push(...(await audit(await reader.frame(), "no agent")));
    await reader.answer(String(message.data.thread_id), ANSWER, "It orders the messages");
    found.push(...(await audit(await reader.frame(), "answered")));
    await reader.page.close();
    assert.deepEqual(found, []);
  });

  test("dark theme: the reader and the playground", async () => {
    const reader = await readerWithThread({ answered: true, query: "?agent=off&theme=dark" });
    const frame = await reader.frame();
    await frame.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    const found = [...(await audit(frame, "dark")), ...(await audit(reader.page, "playground dark"))];
    await reader.page.close();
    assert.deepEqual(found, []);
  });

  test("narrow and wide", async () => {
    const narrow = await readerWithThread({ answered: true, width: 600 });
    const found = await audit(await narrow.frame(), "narrow");
    await narrow.page.close();
    const wide = await readerWithThread({ answered: true, width: 2560 });
    found.push(...(await audit(await wide.frame(), "wide")));
    await wide.page.close();
    assert.deepEqual(found, []);
  });

  test("a long document with its contents", async () => {
    const lines = Array.from({ length: 40 }, (_, index) => `## Part ${index + 1}\n\nThe text of part ${index + 1}, long enough to read.\n`);
    const channelId = await rig.openDocument(`# Long\n\n${lines.join("\n")}`, "Long");
    const reader = await rig.open({ query: "?agent=off", hash: channelId });
    const found = await audit(await reader.frame(), "long document");
    await reader.page.close();
    assert.deepEqual(found, []);
  });

  test("nothing failed in the pages", () => {
    assert.deepEqual(rig.pageErrors, []);
  });
});
