/**
 * Unit tests of the reader's ask budget (protocol/ask-budget.ts): every ask it lets through
 * fits the limit, the question is never cut, and what was left out is counted.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fitAsk, jsonBytes } from "../../protocol/ask-budget.js";
import type { AskData, HistoryEntry } from "../../protocol/reader.js";

const LIMIT = 64 * 1024;

function ask(history: HistoryEntry[], question = "And then?"): AskData {
  return { thread_id: "t-1", quote: "a passage", paragraph: "The paragraph around a passage.", question, history };
}

const turns = (count: number, size: number): HistoryEntry[] =>
  Array.from({ length: count }, (_, index) => ({ role: index % 2 === 0 ? "user" : "agent", text: `${index}: ${"é".repeat(size)}` }));

describe("fitting an ask into the message limit", () => {
  test("an ask that fits goes whole", () => {
    const whole = ask(turns(4, 100));
    assert.deepEqual(fitAsk(whole, LIMIT), { fits: true, data: whole, omitted: 0 });
  });

  test("the oldest turns go first, the last exchange stays, and the count says so", () => {
    const fitted = fitAsk(ask(turns(10, 8_000)), LIMIT);
    assert.ok(fitted.fits);
    assert.ok(jsonBytes(fitted.data) <= LIMIT);
    assert.equal(fitted.data.question, "And then?");
    assert.ok(fitted.omitted >= 1 && fitted.omitted === fitted.data.omitted);
    assert.deepEqual(
      fitted.data.history.slice(-2).map((entry) => entry.text.slice(0, 2)),
      ["8:", "9:"],
    );
  });

  test("turns too long even alone are cut short, marked, and counted", () => {
    const fitted = fitAsk(ask(turns(2, 60_000)), LIMIT);
    assert.ok(fitted.fits);
    assert.ok(jsonBytes(fitted.data) <= LIMIT, `${jsonBytes(fitted.data)} bytes`);
    assert.ok(fitted.data.history.some((entry) => entry.text.endsWith(" […]")));
    assert.ok(fitted.omitted >= 1);
  });

  test("a question too long on its own is refused with a length that would fit", () => {
    const fitted = fitAsk(ask([], "?".repeat(70_000)), LIMIT);
    assert.equal(fitted.fits, false);
    assert.ok(!fitted.fits && fitted.maxQuestionChars > 10_000 && fitted.maxQuestionChars < LIMIT);
  });

  test("a huge paragraph is cut so that the question still goes", () => {
    const fitted = fitAsk({ ...ask([]), paragraph: "p".repeat(100_000) }, LIMIT);
    assert.ok(fitted.fits);
    assert.ok(jsonBytes(fitted.data) <= LIMIT);
    assert.equal(fitted.data.question, "And then?");
  });
});
