/**
 * Unit tests of the stdio reader's parts: cutting stdin into lines with a size limit,
 * and finding a too-large request's id as it streams past. The process-level proof (an
 * 11 MiB call answered with an error, the server still up) is in test/hostile-input.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LineReader } from "../../server/transports/line-reader.js";
import { type RequestId, RequestIdScanner } from "../../server/transports/request-id.js";

/** The id the scanner finds in `text`, pushed in pieces of `pieceBytes`. */
function idOf(text: string, pieceBytes = Number.POSITIVE_INFINITY): RequestId | undefined {
  const bytes = Buffer.from(text);
  const scanner = new RequestIdScanner();
  const step = Math.min(pieceBytes, bytes.length) || 1;
  for (let start = 0; start < bytes.length; start += step) scanner.push(bytes.subarray(start, start + step));
  return scanner.id;
}

describe("RequestIdScanner", () => {
  test("finds the top-level id wherever it is, whatever the pieces", () => {
    const params = JSON.stringify({ name: "open_reader", arguments: { markdown: 'a "quoted" \\ text, with "id": 99 inside', id: 98 } });
    const cases: [string, RequestId][] = [
      [`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":${params}}`, 7],
      [`{"method":"tools/call","params":${params},"jsonrpc":"2.0","id":12345}`, 12345],
      [`{ "params" : ${params} , "id" : "req-\\"1\\"\\u00e9" }`, 'req-"1"é'],
      [`{"id":-3}`, -3],
      [`{"idx":1,"id":2}`, 2],
    ];
    for (const [text, id] of cases) {
      for (const piece of [1, 2, 7, Number.POSITIVE_INFINITY]) assert.deepEqual(idOf(text, piece), id, `${text} in pieces of ${piece}`);
    }
  });

  test("finds nothing where there is no usable id", () => {
    for (const text of [
      `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"id":1}}`,
      `[{"id":1}]`,
      `{"id":{"a":1}}`,
      `{"id":null}`,
      `{"id":"${"x".repeat(300)}"}`,
      `{"text":"\\"id\\":5"}`,
    ]) {
      assert.equal(idOf(text, 3), undefined, text);
    }
  });
});

describe("LineReader", () => {
  test("passes lines up to the limit, reports a longer one with its size and id, and goes on", () => {
    const lines: string[] = [];
    const oversized: [number, RequestId | undefined][] = [];
    const reader = new LineReader(
      20,
      (line) => lines.push(line.toString()),
      (bytes, id) => oversized.push([bytes, id]),
    );
    const big = `{"params":"${"x".repeat(40)}","id":4}`;
    const input = Buffer.from(`{"id":1}\n\n${big}\n{"id":2}\r\n${"y".repeat(21)}\n{"id":3}\npartial`);
    for (let start = 0; start < input.length; start += 5) reader.push(input.subarray(start, start + 5));
    assert.deepEqual(lines, ['{"id":1}', '{"id":2}\r', '{"id":3}']);
    assert.deepEqual(oversized, [
      [Buffer.byteLength(big), 4],
      [21, undefined],
    ]);
  });

  test("is linear: a 50 MiB request in 64 KiB chunks is skipped, and its id found, in well under a second", () => {
    let reported: [number, RequestId | undefined] | undefined;
    const reader = new LineReader(
      10 * 1024 * 1024,
      () => undefined,
      (bytes, id) => (reported = [bytes, id]),
    );
    const head = Buffer.from('{"method":"tools/call","params":{"name":"open_reader","arguments":{"markdown":"');
    const tail = Buffer.from('"}},"jsonrpc":"2.0","id":42}\n');
    const chunk = Buffer.alloc(64 * 1024, "word ");
    const started = performance.now();
    reader.push(head);
    for (let sent = 0; sent < 50 * 1024 * 1024; sent += chunk.length) reader.push(chunk);
    reader.push(tail);
    const ms = performance.now() - started;
    assert.deepEqual(reported, [head.length + 50 * 1024 * 1024 + tail.length - 1, 42]);
    assert.ok(ms < 500, `${Math.round(ms)} ms`);
  });
});
