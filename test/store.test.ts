/**
 * What only the file store has, on a real disk, in one process: corrupt files, file
 * modes, locks, the queue log's format. The contract both stores keep (seq, cursors,
 * read-and-clear, limits, channel ids, long-polls, state, sessions, the sweep) is
 * store-contract.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FileStore } from "../store/file/file-store.js";
import { channelDir, queueFile } from "../core/paths.js";
import { withLock } from "../core/fs/lock.js";
import { deadHolderRecord } from "./support/dead-holder.js";
import { tempDataDir } from "./support/helpers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: dataDir, cleanup } = await tempDataDir()));
after(() => cleanup());

function quietStore(options: ConstructorParameters<typeof FileStore>[0] = {}) {
  const warnings: string[] = [];
  const store = new FileStore({ dataDir, warn: (message) => warnings.push(message), ...options });
  return { store, warnings };
}

describe("corrupt files", () => {
  for (const [label, content] of [
    ["truncated JSON", '{"version":1,"next_seq":7,"messages":[{"seq":5,"ev'],
    ["random bytes", "\u0000\u00ff\u0013garbage"],
    ["JSON of the wrong shape", '{"version":1,"next_seq":"x","messages":{}}'],
  ] as const) {
    test(`${label} is moved aside, reported, and the queue keeps working above every old seq`, async () => {
      const { store, warnings } = quietStore();
      const channel = `corrupt-${label.split(" ")[0]}`;
      await store.append(channel, "ui", "e");
      const path = queueFile(dataDir, channel, "ui");
      await writeFile(path, content);
      const { seq } = await store.append(channel, "ui", "after", { ok: 1 });
      assert.ok(seq > 6, `seq ${seq} restarts above the old ones`);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /moved .* aside to .*\.corrupt-/);
      const files = await readdir(channelDir(dataDir, channel));
      const aside = files.find((name) => name.startsWith("ui.json.corrupt-"));
      assert.ok(aside, `a .corrupt- file in ${files.join(", ")}`);
      assert.equal(await readFile(join(channelDir(dataDir, channel), aside), "utf8"), content, "kept, not deleted");
      assert.deepEqual(
        (await store.poll(channel, "ui")).messages.map((m) => m.event),
        ["after"],
      );
    });
  }

  test("a next_seq below a message's seq is raised, so no seq repeats", async () => {
    const { store } = quietStore();
    await store.append("low", "ui", "e");
    await writeFile(
      queueFile(dataDir, "low", "ui"),
      `{"version":2,"next_seq":2}\n${JSON.stringify({ seq: 9, event: "e", data: {}, ts: new Date().toISOString() })}\n`,
    );
    assert.equal((await store.append("low", "ui", "e")).seq, 10);
  });
});

describe("files and the idle sweep", () => {
  test("files are 0600 and folders 0700", { skip: process.platform === "win32" }, async () => {
    const { store } = quietStore();
    await store.append("modes", "ui", "e");
    assert.equal((await stat(channelDir(dataDir, "modes"))).mode & 0o777, 0o700);
    assert.equal((await stat(queueFile(dataDir, "modes", "ui"))).mode & 0o777, 0o600);
  });

  test("a channel whose lock a live process holds is not removed by the idle sweep", async () => {
    const { dir, cleanup: done } = await tempDataDir();
    try {
      const store = new FileStore({ dataDir: dir, limits: { channelTtlMs: 60_000 } });
      await store.append("busy", "ui", "e");
      await store.poll("busy", "ui");
      const longAgo = new Date(Date.now() - 120_000);
      await withLock(queueFile(dir, "busy", "ui"), { staleMs: 2000 }, async () => {
        await utimes(channelDir(dir, "busy"), longAgo, longAgo);
        assert.deepEqual(await store.removeIdleChannels(), []);
      });
    } finally {
      await done();
    }
  });
});

describe("stale locks", () => {
  test("a lock left by a killed process is broken after the stale time, not before", async () => {
    const { store } = quietStore({ limits: { lockStaleMs: 2000 } });
    await store.append("stale", "ui", "e");
    // A holder killed on another machine (or in another container) leaves its record behind and stops beating.
    const lock = `${queueFile(dataDir, "stale", "ui")}.lock`;
    await writeFile(lock, JSON.stringify({ pid: 4242, machine: "another machine", started: null, nonce: "0", beat: 0 }), { mode: 0o600 });
    const started = Date.now();
    const { seq } = await store.append("stale", "ui", "e");
    const waited = Date.now() - started;
    assert.equal(seq, 2);
    assert.ok(waited >= 1500, `waited ${waited} ms: a fresh lock is respected`);
    assert.ok(waited < 4000, `waited ${waited} ms: the stale lock was broken`);
  });

  test("a lock whose holder is gone is broken at once, whatever its date", {
    skip: process.platform !== "linux" && "holders are checked through /proc",
  }, async () => {
    const { store, warnings } = quietStore({ limits: { lockStaleMs: 2000 } });
    await store.append("dead-holder", "ui", "e");
    const lock = `${queueFile(dataDir, "dead-holder", "ui")}.lock`;
    // The record a holder writes, of a process that has exited, dated a year ahead.
    const { pid, record } = await deadHolderRecord();
    await writeFile(lock, record, { mode: 0o600 });
    const aYearAhead = new Date(Date.now() + 365 * 24 * 3600_000);
    await utimes(lock, aYearAhead, aYearAhead);
    const waitStarted = Date.now();
    await store.append("dead-holder", "ui", "e");
    assert.ok(Date.now() - waitStarted < 1000, `waited ${Date.now() - waitStarted} ms`);
    assert.match(warnings.join("\n"), new RegExp(`broke the lock .*, left by process ${pid}, which is gone`));
  });
});

describe("the queue log", () => {
  test("a torn last line is ignored by readers and cut off by the next writer", async () => {
    const { store, warnings } = quietStore();
    await store.append("torn", "agent", "ask", { n: 1 });
    const path = queueFile(dataDir, "torn", "agent");
    // A write cut short (a full disk, a crash): no newline at its end.
    await writeFile(path, `${await readFile(path, "utf8")}{"seq":2,"event":"ask","da`);
    assert.deepEqual(
      (await store.peek("torn", "agent")).map((m) => m.seq),
      [1],
      "the torn record is not acted on",
    );
    assert.equal((await store.append("torn", "agent", "ask", { n: 2 })).seq, 2);
    assert.deepEqual(
      (await store.poll("torn", "agent")).messages.map((m) => m.data),
      [{ n: 1 }, { n: 2 }],
    );
    assert.deepEqual(warnings, [], "a torn tail is not corruption");
    assert.ok((await readFile(path, "utf8")).endsWith("\n"));
  });

  test("acknowledged records are compacted away, and seq goes on", async () => {
    const { store } = quietStore();
    for (let n = 1; n <= 1500; n++) {
      await store.append("compact", "ui", "e", { text: "x".repeat(100) });
      await store.poll("compact", "ui", { after: n });
    }
    const { size } = await stat(queueFile(dataDir, "compact", "ui"));
    assert.ok(size < 100 * 1024, `the log is ${size} bytes after 1,500 messages and acks`);
    assert.equal((await store.append("compact", "ui", "e")).seq, 1501);
  });
});
