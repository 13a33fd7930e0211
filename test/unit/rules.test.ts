/**
 * Unit tests of the pure rules every layer shares: ids, JSON data, the queue log format.
 * They run in milliseconds (`npm run test:unit`); the process-level suites are beside them.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { shellQuote, shellWords } from "../../core/commands.js";
import { CallerError, callerErrorCode } from "../../core/errors.js";
import { LockLostError } from "../../core/fs/errors.js";
import { toolErrorCode } from "../../protocol/tool-error.js";
import { toolError } from "../../server/tools/results.js";
import { assertChannelId, InvalidChannelIdError, isChannelId, mintChannelId } from "../../core/ids.js";
import { jsonProblem } from "../../core/json.js";
import { logHeader, logRecord, parseLog, salvageSeqFloor, serializeLog } from "../../store/file/log-format.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import { CorruptQueueFileError, InvalidCursorError, QueueFullError } from "../../store/errors.js";

describe("channel ids", () => {
  test("accept the pattern and refuse anything that could name a path", () => {
    for (const id of ["a", "ch-1", "A_b-9", "x".repeat(64)]) assert.ok(isChannelId(id), id);
    for (const id of ["", ".", "..", "a/b", "a\\b", "x".repeat(65), "a b", "é", 5, null]) assert.ok(!isChannelId(id), String(id));
    for (const id of ["-h", "--timeout", "-", "CON", "nul", "Com1", "LPT9", "aux", "PRN"]) assert.ok(!isChannelId(id), id);
    for (const id of ["_-", "CONX", "COM0", "nul-1", "LPT10", "a-"]) assert.ok(isChannelId(id), id);
    assert.throws(() => assertChannelId("../etc"), InvalidChannelIdError);
  });

  test("minted ids match the pattern and differ", () => {
    const ids = new Set(Array.from({ length: 100 }, mintChannelId));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^ch-[0-9a-z]+-[0-9a-f]{20}$/);
  });
});

describe("JSON data", () => {
  test("refuses non-JSON values and nesting past the limit, without recursion", () => {
    assert.equal(jsonProblem({ a: [1, "x", null, true] }), undefined);
    assert.match(jsonProblem(Number.NaN) ?? "", /finite/);
    assert.match(jsonProblem({ f: () => 1 }) ?? "", /function/);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.match(jsonProblem(deep) ?? "", /nested more than 64/);
  });
});

describe("the queue log", () => {
  const message = (seq: number) => ({ seq, event: "ask", data: { n: seq }, ts: "2026-01-01T00:00:00.000Z" });

  test("folds acks, keeps next_seq above every seq and ack, and ignores a torn last line", () => {
    const text = logHeader(1, "e1") + logRecord(message(1)) + logRecord(message(2)) + logRecord({ ack: 1 }) + '{"seq":3,"ev';
    const parsed = parseLog(text);
    assert.deepEqual(
      parsed.queue.messages.map((m: { seq: number }) => m.seq),
      [2],
    );
    assert.equal(parsed.queue.next_seq, 3);
    assert.equal(parsed.queue.epoch, "e1");
    assert.ok(parsed.totalBytes > parsed.validBytes, "the torn line is not valid");
  });

  test("a header's epoch: kept by a rewrite, none when a header has none, and one that is not an epoch makes the file corrupt", () => {
    const parsed = parseLog(logHeader(4, "abc-DEF_1") + logRecord(message(4)));
    assert.equal(parsed.queue.epoch, "abc-DEF_1");
    assert.equal(parseLog(serializeLog(parsed.queue)).queue.epoch, "abc-DEF_1");
    assert.equal(parseLog(logHeader(1, NO_EPOCH)).queue.epoch, NO_EPOCH);
    assert.equal(parseLog('{"version":2,"next_seq":1}\n').queue.epoch, NO_EPOCH);
    assert.throws(() => parseLog('{"version":2,"next_seq":1,"epoch":"a/b"}\n'), CorruptQueueFileError);
    assert.throws(() => parseLog('{"version":2,"next_seq":1,"epoch":7}\n'), CorruptQueueFileError);
  });

  test("refuses out-of-order seqs and lines that are not records", () => {
    assert.throws(() => parseLog(logHeader(1, NO_EPOCH) + logRecord(message(2)) + logRecord(message(2))), CorruptQueueFileError);
    assert.throws(() => parseLog(`${logHeader(1, NO_EPOCH)}[1]\n`), CorruptQueueFileError);
  });

  test("salvage finds the highest seq the remains show", () => {
    assert.equal(salvageSeqFloor('garbage {"next_seq":41} {"seq": 17}'), 40);
    assert.equal(salvageSeqFloor("nothing"), 0);
  });
});

describe("errors for the caller", () => {
  test("are CallerErrors by type, so a tool shows their message", () => {
    assert.ok(new InvalidCursorError(-1) instanceof CallerError);
    assert.ok(new QueueFullError("c", "ui", "messages", 1) instanceof CallerError);
    assert.ok(new InvalidChannelIdError("x/y") instanceof CallerError);
    assert.ok(!(new Error("internal") instanceof CallerError));
  });

  test("carry a stable code from the one table, read without instanceof (an error of another copy of the package counts)", () => {
    assert.equal(new QueueFullError("c", "ui", "messages", 1).code, "QUEUE_FULL");
    assert.equal(callerErrorCode(new InvalidChannelIdError("x/y")), "INVALID_CHANNEL_ID");
    assert.equal(callerErrorCode(new LockLostError("/q.json", "broken")), "LOCK_LOST");
    const foreign = Object.assign(new Error("queue full, from another bundle"), { code: "QUEUE_FULL" });
    assert.equal(callerErrorCode(foreign), "QUEUE_FULL");
    assert.equal(callerErrorCode(Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" })), undefined);
    assert.equal(callerErrorCode(new Error("internal")), undefined);
    assert.equal(callerErrorCode({ code: "QUEUE_FULL" }), undefined, "not an error: no message");
  });

  test("tool results carry the code: a caller error's own, FILE_SYSTEM for an I/O error, INTERNAL for anything else", () => {
    const logged: string[] = [];
    const log = (line: string) => logged.push(line);
    const foreign = Object.assign(new Error("queue full, from another bundle"), { code: "QUEUE_FULL" });
    assert.deepEqual(toolError(foreign, log).structuredContent, { error: { code: "QUEUE_FULL", message: "queue full, from another bundle" } });
    const io = Object.assign(new Error("ENOSPC"), { code: "ENOSPC", syscall: "write", path: "/data/q.json" });
    assert.equal(toolErrorCode(toolError(io, log).structuredContent), "FILE_SYSTEM");
    assert.equal(toolErrorCode(toolError(new TypeError("x is undefined"), log).structuredContent), "INTERNAL");
    assert.equal(logged.length, 1, "only the internal error is logged");
  });
});

describe("command lines", () => {
  test("shellQuote's words read back as the same words, on sh and on cmd", () => {
    const args = ["/opt/backchannel/dist/cli/main.js", "/Users/Jane Doe/it's here/main.js", "C:\\Program Files\\backchannel\\main.js", 'a$b`c"d'];
    for (const arg of args) assert.deepEqual(shellWords(`node ${shellQuote(arg, "linux")} watch x`), ["node", arg, "watch", "x"], arg);
    for (const arg of args.slice(0, 3)) assert.deepEqual(shellWords(`node ${shellQuote(arg, "win32")}`), ["node", arg], arg);
  });
});
