/**
 * The file store's queue mark (store/file/queue-log.ts): an append reads the mark, not
 * the log, however long the queue; and when the mark does not describe the log (a
 * crash between the two writes, a mark that is not one), the log is the truth.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { appendFile, writeFile } from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { after, before, describe, test } from "node:test";
import { queueFile, queueMarkFile } from "../core/paths.js";
import type { Limits } from "../core/limits.js";
import { FileStore } from "../store/file/file-store.js";
import { QueueFullError } from "../store/errors.js";
import { tempDataDir } from "./support/helpers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: dataDir, cleanup } = await tempDataDir()));
after(() => cleanup());

function quietStore(limits: Partial<Limits> = {}) {
  const warnings: string[] = [];
  return { store: new FileStore({ dataDir, limits, warn: (message) => warnings.push(message) }), warnings };
}

/**
 * Runs `action` while noting every open of `path` that can read it (fs.openSync wrapped,
 * and the wrapper given to the store's named imports of node:fs).
 * @returns how many such opens there were.
 */
async function readOpensOf(path: string, action: () => Promise<unknown>): Promise<number> {
  const original = fs.openSync;
  let opens = 0;
  fs.openSync = ((file: fs.PathLike, flags: fs.OpenMode = "r", mode?: fs.Mode) => {
    const { O_RDONLY, O_WRONLY, O_RDWR } = fs.constants;
    const access = typeof flags === "number" ? flags & (O_RDONLY | O_WRONLY | O_RDWR) : O_RDONLY;
    if (String(file) === path && access !== fs.constants.O_WRONLY) opens += 1;
    return original(file, flags, mode);
  }) as typeof fs.openSync;
  syncBuiltinESMExports();
  try {
    await action();
  } finally {
    fs.openSync = original;
    syncBuiltinESMExports();
  }
  return opens;
}

describe("the queue mark", () => {
  test("an append never reads the log, whether the queue holds 1 message or 999", async () => {
    const { store, warnings } = quietStore();
    const path = queueFile(dataDir, "deep", "agent");
    await store.append("deep", "agent", "ask", { n: 0 });
    assert.equal(await readOpensOf(path, () => store.append("deep", "agent", "ask", { n: 1 })), 0, "at 1 message");
    for (let n = 2; n < 999; n++) await store.append("deep", "agent", "ask", { n, pad: "x".repeat(100) });
    assert.equal(await readOpensOf(path, () => store.append("deep", "agent", "ask", { n: 999 })), 0, "at 999 messages");
    await assert.rejects(store.append("deep", "agent", "ask", { n: 1000 }), QueueFullError, "the count in the mark is the queue's");
    assert.equal((await store.peek("deep", "agent")).length, 1000);
    assert.deepEqual(warnings, []);
  });

  test("a record written behind the mark's back (a crash between the log's write and the mark's) is counted: the limit holds and no seq repeats", async () => {
    const { store, warnings } = quietStore({ maxQueueMessages: 3 });
    const path = queueFile(dataDir, "behind", "ui");
    await store.append("behind", "ui", "e", { n: 1 });
    await store.append("behind", "ui", "e", { n: 2 });
    await appendFile(path, `${JSON.stringify({ seq: 3, event: "e", data: { n: 3 }, ts: new Date().toISOString() })}\n`);
    await assert.rejects(store.append("behind", "ui", "e", { n: 4 }), QueueFullError, "3 messages wait, as the log says");
    const read = await store.poll("behind", "ui", { after: 0 });
    assert.deepEqual(
      read.messages.map((message) => message.data),
      [{ n: 1 }, { n: 2 }, { n: 3 }],
    );
    await store.poll("behind", "ui", { after: read.cursor });
    assert.equal((await store.append("behind", "ui", "e", { n: 4 })).seq, 4, "above the record the mark never saw");
    assert.deepEqual(warnings, [], "a mark behind its log is not corruption");
  });

  test("a mark that holds no record (garbage, cut short) is rebuilt from the log, and the queue goes on", async () => {
    const { store } = quietStore();
    for (let n = 1; n <= 3; n++) await store.append("garbled", "ui", "e", { n });
    for (const text of ["not a mark\n", '{"seq":3,"count":3,"bytes":', ""]) {
      await writeFile(queueMarkFile(dataDir, "garbled", "ui"), text);
      const { seq, pending } = await store.append("garbled", "ui", "e", { text });
      assert.equal(pending, seq, `after ${JSON.stringify(text)}: every message counted`);
    }
    assert.deepEqual(
      (await store.peek("garbled", "ui")).map((message) => message.seq),
      [1, 2, 3, 4, 5, 6],
    );
  });
});
