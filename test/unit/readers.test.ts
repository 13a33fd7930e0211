/**
 * Unit tests of the readers' rules (store/readers.ts), which the file store runs as they
 * are and the Redis store's read script restates in Lua (both held by the store contract):
 * what a poll records, how far it trims, when it is told it missed messages, and the
 * records' text, which a torn file must never turn into a hold or a crash.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatReaders, MAX_READERS, parseReaders, planRead, READER_LEASE_MS, READER_RENEW_MS, type ReadRequest } from "../../store/readers.js";

const NOW = 1_800_000_000_000;

function request(fields: Partial<ReadRequest>): ReadRequest {
  return { reader: "reader-one", after: 0, acknowledges: true, floor: 0, now: NOW, judged: true, ...fields };
}

describe("planRead", () => {
  test("trims to the lowest live cursor, the caller's own included", () => {
    const plan = planRead({ "reader-two": { seq: 3, seen: NOW - 1_000 } }, request({ after: 7 }));
    assert.equal(plan.trimTo, 3);
    assert.deepEqual(plan.readers, { "reader-two": { seq: 3, seen: NOW - 1_000 }, "reader-one": { seq: 7, seen: NOW } });
    assert.equal(plan.missed, false);
  });

  test("a lapsed reader holds nothing back and is dropped", () => {
    const plan = planRead({ "reader-two": { seq: 3, seen: NOW - READER_LEASE_MS } }, request({ after: 7 }));
    assert.equal(plan.trimTo, 7);
    assert.deepEqual(Object.keys(plan.readers ?? {}), ["reader-one"]);
  });

  test("a fresh record at the same cursor is not written again; an old one is", () => {
    assert.equal(planRead({ "reader-one": { seq: 5, seen: NOW - 1 } }, request({ after: 5 })).readers, null);
    assert.notEqual(planRead({ "reader-one": { seq: 5, seen: NOW - READER_RENEW_MS } }, request({ after: 5 })).readers, null);
  });

  test("missed: only a judged reader whose cursor is below what was deleted and that no live record held", () => {
    assert.equal(planRead({}, request({ after: 2, floor: 5 })).missed, true, "no record");
    assert.equal(planRead({}, request({ after: 2, floor: 5, judged: false })).missed, false, "a first poll starts where the queue is");
    assert.equal(planRead({ "reader-one": { seq: 2, seen: NOW - 1 } }, request({ after: 2, floor: 5 })).missed, false, "held: the floor is a skip");
    assert.equal(planRead({ "reader-one": { seq: 2, seen: NOW - READER_LEASE_MS } }, request({ after: 2, floor: 5 })).missed, true, "lapsed");
    assert.equal(planRead({}, request({ after: 5, floor: 5 })).missed, false, "nothing after the cursor went");
  });

  test("a cursor that names no seq of the queue trims nothing and holds everything kept", () => {
    const plan = planRead({}, request({ after: 0, acknowledges: false, floor: 4 }));
    assert.equal(plan.trimTo, 0);
    assert.deepEqual(plan.readers?.["reader-one"], { seq: 4, seen: NOW });
  });

  test(`keeps at most ${MAX_READERS} records, dropping the one seen longest ago`, () => {
    const current = Object.fromEntries(Array.from({ length: MAX_READERS }, (_, i) => [`reader-${i}-x`, { seq: 0, seen: NOW - 1_000 + i }]));
    const plan = planRead(current, request({ reader: "reader-new" }));
    assert.equal(Object.keys(plan.readers ?? {}).length, MAX_READERS);
    assert.equal(plan.readers?.["reader-0-x"], undefined);
  });
});

describe("the records' text", () => {
  test("round-trips, and anything else reads as no records", () => {
    const readers = { "reader-one": { seq: 9, seen: NOW }, "~": { seq: 2, seen: NOW - 5 } };
    assert.deepEqual(parseReaders(formatReaders(readers)), readers);
    for (const text of ["", '{"reader-one":[9,', "[]", '{"a/b":[1,2]}', '{"reader-one":[-1,2]}', '{"reader-one":"9"}'])
      assert.deepEqual(parseReaders(text), {}, JSON.stringify(text));
  });
});
