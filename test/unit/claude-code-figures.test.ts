/**
 * Unit tests of the arithmetic of the Claude Code bench suite
 * (test/support/claude-code/figures.ts): which model requests belong to an ask, which
 * count as idle, and the multiple of Claude Code's floor. The suite itself is a bench
 * (`npm run bench -- --only claude-code`), not part of `npm test`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { askFigures, floorMultiple, median } from "../support/claude-code/figures.js";

describe("askFigures", () => {
  // Two asks: the first woke the model at 130 (after a request at 90 that belongs to
  // nothing), its turn ended at 170, then one stray request at 400 in its quiet stretch;
  // the second ask at 1,000 took three requests, its turn ended at 1,300, nothing after.
  const requests = [1_300, 90, 130, 150, 170, 400, 1_050, 1_200];
  const asks = [
    { askedAt: 100, answeredAt: 160, endedAt: 170, quietUntil: 1_000 },
    { askedAt: 1_000, answeredAt: 1_310, endedAt: 1_300, quietUntil: 2_000 },
  ];

  test("ask → turn is the first request at or after the ask; ask → answer the app's time", () => {
    const figures = askFigures(requests, asks);
    assert.deepEqual(
      figures.map((figure) => [figure.askToTurnMs, figure.askToAnswerMs]),
      [
        [30, 60],
        [50, 310],
      ],
    );
  });

  test("an ask's requests run from the ask to the end of its turn, both included; later ones before the next ask are idle", () => {
    const figures = askFigures(requests, asks);
    assert.deepEqual(
      figures.map((figure) => [figure.requests, figure.idleRequests]),
      [
        [3, 1],
        [3, 0],
      ],
    );
  });

  test("a request at the very moment of the ask counts as its wake (a model request cannot come before its cause is recorded)", () => {
    const [figure] = askFigures([100, 120], [{ askedAt: 100, answeredAt: 110, endedAt: 120, quietUntil: 200 }]);
    assert.equal(figure!.askToTurnMs, 0);
    assert.equal(figure!.requests, 2);
  });

  test("an ask no request followed has no wake (NaN), not a made-up one", () => {
    const [figure] = askFigures([10], [{ askedAt: 100, answeredAt: 110, endedAt: 120, quietUntil: 200 }]);
    assert.ok(Number.isNaN(figure!.askToTurnMs));
    assert.equal(figure!.requests, 0);
  });

  test("times out of order are refused with the ask they belong to", () => {
    assert.throws(() => askFigures([], [{ askedAt: 100, answeredAt: 90, endedAt: 120, quietUntil: 200 }]), /ask 1: its times are out of order/);
    assert.throws(() => askFigures([], [{ askedAt: 100, answeredAt: 110, endedAt: 120, quietUntil: 110 }]), RangeError);
  });
});

describe("floorMultiple", () => {
  test("ask → answer p50 over floor p50 × the turns the path needs", () => {
    // Medians: 300 and 100 (nearest rank); 300 / (100 × 2) = 1.5.
    assert.equal(median([900, 300, 200]), 300);
    assert.equal(floorMultiple([900, 300, 200], [100, 80, 120], 2), 1.5);
    assert.equal(floorMultiple([300], [100], 1), 3);
  });

  test("refuses a turn count that is not a positive whole number, or no samples", () => {
    assert.throws(() => floorMultiple([1], [1], 0), /turns must be a whole number ≥ 1/);
    assert.throws(() => floorMultiple([1], [1], 1.5), RangeError);
    assert.throws(() => floorMultiple([], [1], 1), /no samples/);
  });
});
