/**
 * The file store on a real disk, in one process: seq, cursors, read-and-clear, limits,
 * corrupt files, channel ids, state documents, the idle sweep.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, readlink, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FileStore } from "../store/file/file-store.js";
import { InvalidChannelIdError } from "../core/ids.js";
import { InvalidCursorError, MessageTooLargeError, QueueFullError } from "../store/errors.js";
import { channelDir, queueFile, sessionFile } from "../core/paths.js";
import { withLock } from "../store/file/lock.js";
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

describe("seq", () => {
  test("starts at 1, grows by one, and is never reused after a drain", async () => {
    const { store } = quietStore();
    const first = await store.append("seq", "ui", "a", { n: 1 });
    const second = await store.append("seq", "ui", "a", { n: 2 });
    assert.deepEqual([first.seq, second.seq], [1, 2]);
    assert.equal(second.pending, 2);
    const drained = await store.poll("seq", "ui");
    assert.deepEqual(
      drained.messages.map((m) => m.seq),
      [1, 2],
    );
    assert.equal(drained.pending, 0);
    const third = await store.append("seq", "ui", "a");
    assert.equal(third.seq, 3);
    assert.equal(third.pending, 1);
  });

  test("messages carry event, data and an ISO timestamp", async () => {
    const { store } = quietStore();
    await store.append("shape", "agent", "ask", { question: "why?" });
    const [message] = (await store.poll("shape", "agent")).messages;
    assert.equal(message?.event, "ask");
    assert.deepEqual(message?.data, { question: "why?" });
    assert.ok(!Number.isNaN(Date.parse(message!.ts)) && message!.ts.endsWith("Z"));
  });
});

describe("cursor reads", () => {
  test("delete <= after, return > after, and a repeated cursor returns the same messages", async () => {
    const { store } = quietStore();
    for (let n = 1; n <= 5; n++) await store.append("cursor", "ui", "e", { n });
    const all = await store.poll("cursor", "ui", { after: 0 });
    assert.deepEqual(
      all.messages.map((m) => m.seq),
      [1, 2, 3, 4, 5],
    );
    assert.equal(all.cursor, 5);
    const fromTwo = await store.poll("cursor", "ui", { after: 2 });
    assert.deepEqual(
      fromTwo.messages.map((m) => m.seq),
      [3, 4, 5],
    );
    assert.deepEqual(await store.peek("cursor", "ui").then((ms) => ms.map((m) => m.seq)), [3, 4, 5], "1 and 2 were deleted");
    const again = await store.poll("cursor", "ui", { after: 2 });
    assert.deepEqual(again.messages, fromTwo.messages, "a lost response costs nothing");
    const done = await store.poll("cursor", "ui", { after: 5 });
    assert.deepEqual(done.messages, []);
    assert.equal(done.cursor, 5);
    assert.deepEqual(await store.peek("cursor", "ui"), []);
  });

  test("a cursor above the last seq handed out moves nothing: it acknowledges nothing and gets the queue from its start", async () => {
    const { store } = quietStore();
    assert.deepEqual(await store.poll("ahead", "ui", { after: 40 }), { messages: [], cursor: 0, pending: 0 }, "an empty queue: cursor 0");
    assert.equal((await store.append("ahead", "ui", "e", { n: 1 })).seq, 1, "the seq did not move");
    const ahead = await store.poll("ahead", "ui", { after: 40 });
    assert.deepEqual(
      ahead.messages.map((m) => m.data),
      [{ n: 1 }],
      "from the start",
    );
    assert.equal(ahead.cursor, 1, "the cursor to go on with is below the one given");
    assert.equal((await store.peek("ahead", "ui")).length, 1, "nothing acknowledged");
    assert.equal((await store.append("ahead", "ui", "e", { n: 2 })).seq, 2);
  });

  test("a negative or fractional cursor is refused", async () => {
    const { store } = quietStore();
    await assert.rejects(store.poll("bad-cursor", "ui", { after: -1 }), InvalidCursorError);
    await assert.rejects(store.poll("bad-cursor", "ui", { after: 1.5 }), InvalidCursorError);
  });
});

describe("read-and-clear", () => {
  test("returns everything pending once", async () => {
    const { store } = quietStore();
    await store.append("clear", "agent", "ask", { q: 1 });
    await store.append("clear", "agent", "ask", { q: 2 });
    const first = await store.poll("clear", "agent");
    assert.deepEqual(
      first.messages.map((m) => m.data),
      [{ q: 1 }, { q: 2 }],
    );
    assert.equal(first.cursor, 2);
    const second = await store.poll("clear", "agent");
    assert.deepEqual(second.messages, []);
    assert.equal(second.cursor, 2);
  });

  test("a batch larger than maxBatchBytes is returned over several polls, nothing lost", async () => {
    const { store } = quietStore({ limits: { maxBatchBytes: 300 } });
    for (let n = 1; n <= 6; n++) await store.append("batch", "agent", "e", { text: "x".repeat(100) });
    const seen: number[] = [];
    for (let round = 0; round < 10 && seen.length < 6; round++) {
      const result = await store.poll("batch", "agent");
      assert.ok(result.messages.length >= 1 && result.messages.length < 6);
      assert.equal(result.pending, 6 - seen.length - result.messages.length);
      seen.push(...result.messages.map((m) => m.seq));
    }
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
  });
});

describe("limits", () => {
  test("a message over maxMessageBytes is refused and nothing queued is lost", async () => {
    const { store } = quietStore({ limits: { maxMessageBytes: 100 } });
    await store.append("big", "ui", "e", { ok: true });
    await assert.rejects(store.append("big", "ui", "e", { text: "x".repeat(200) }), (error: unknown) => {
      assert.ok(error instanceof MessageTooLargeError);
      assert.match(error.message, /message too large: .* the limit is 100; send less/);
      return true;
    });
    assert.deepEqual(
      (await store.peek("big", "ui")).map((m) => m.data),
      [{ ok: true }],
    );
  });

  test("a queue at maxQueueMessages refuses the next message, keeps what it has, and says the reader is not reading", async () => {
    const { store } = quietStore({ limits: { maxQueueMessages: 3 } });
    for (let n = 1; n <= 3; n++) await store.append("full", "agent", "e", { n });
    await assert.rejects(store.append("full", "agent", "e", { n: 4 }), (error: unknown) => {
      assert.ok(error instanceof QueueFullError);
      assert.equal(error.limit, "messages");
      assert.match(error.message, /is full \(3 messages\): the agent is not reading it/);
      return true;
    });
    assert.deepEqual(
      (await store.peek("full", "agent")).map((m) => m.data),
      [{ n: 1 }, { n: 2 }, { n: 3 }],
    );
    await store.poll("full", "agent");
    assert.equal((await store.append("full", "agent", "e", { n: 5 })).seq, 4, "room again once read");
  });

  test("a queue at maxQueueBytes refuses the next message and keeps what it has", async () => {
    const { store } = quietStore({ limits: { maxQueueBytes: 400 } });
    await store.append("bytes", "ui", "e", { text: "x".repeat(150) });
    await assert.rejects(store.append("bytes", "ui", "e", { text: "y".repeat(300) }), (error: unknown) => {
      assert.ok(error instanceof QueueFullError);
      assert.equal(error.limit, "bytes");
      assert.match(error.message, /is full \(400 bytes\): the app is not reading it/);
      return true;
    });
    assert.equal((await store.peek("bytes", "ui")).length, 1);
  });

  test("an invalid event name is refused", async () => {
    const { store } = quietStore();
    await assert.rejects(store.append("event", "ui", "has space"), /invalid event name/);
  });
});

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
      JSON.stringify({ version: 1, next_seq: 2, messages: [{ seq: 9, event: "e", data: {}, ts: new Date().toISOString() }] }),
    );
    assert.equal((await store.append("low", "ui", "e")).seq, 10);
  });
});

describe("channel ids", () => {
  for (const bad of ["../x", "a/b", "", "x".repeat(65), "a\u0000b", "..", "a b", "é"]) {
    test(`${JSON.stringify(bad)} is refused before any path is built`, async () => {
      const { store } = quietStore();
      const before = await readdir(dataDir);
      await assert.rejects(store.append(bad, "ui", "e"), InvalidChannelIdError);
      await assert.rejects(store.poll(bad, "ui"), InvalidChannelIdError);
      await assert.rejects(store.peek(bad, "ui"), InvalidChannelIdError);
      await assert.rejects(store.remove(bad), InvalidChannelIdError);
      assert.deepEqual(await readdir(dataDir), before, "nothing was created");
    });
  }

  test("64 characters is accepted", async () => {
    const { store } = quietStore();
    assert.equal((await store.append("y".repeat(64), "ui", "e")).seq, 1);
  });
});

describe("long-poll", () => {
  test("a waiting poll returns as soon as a message lands, and an abort ends the wait", async () => {
    const { store } = quietStore({ fallbackWakeMs: 60_000 });
    const waiting = store.poll("wait", "ui", { after: 0, waitMs: 10_000 });
    setImmediate(() => void store.append("wait", "ui", "e", { n: 1 }));
    const result = await waiting;
    assert.deepEqual(
      result.messages.map((m) => m.data),
      [{ n: 1 }],
    );

    const controller = new AbortController();
    const started = Date.now();
    const aborted = store.poll("wait", "ui", { after: 1, waitMs: 10_000, signal: controller.signal });
    setImmediate(() => controller.abort());
    assert.deepEqual((await aborted).messages, []);
    assert.ok(Date.now() - started < 5000);
  });

  test("a wait with no message returns empty when its time is up", async () => {
    const { store } = quietStore();
    const result = await store.poll("wait-empty", "ui", { after: 0, waitMs: 50 });
    assert.deepEqual(result.messages, []);
  });
});

describe("state documents and channels", () => {
  test("updateState replaces atomically and readState reads it back", async () => {
    const { store } = quietStore({ limits: { maxStateBytes: 64 } });
    assert.equal(await store.readState("state", "doc"), null);
    await store.updateState("state", "doc", () => ({ title: "t" }));
    await store.updateState("state", "doc", (current) => ({ ...(current as object), n: 1 }));
    assert.deepEqual(await store.readState("state", "doc"), { title: "t", n: 1 });
    await assert.rejects(
      store.updateState("state", "doc", () => "x".repeat(100)),
      /limit is 64/,
    );
    assert.deepEqual(await store.readState("state", "doc"), { title: "t", n: 1 });
    await assert.rejects(store.readState("state", "../x"), /invalid state name/);
  });

  test("files are 0600 and folders 0700", { skip: process.platform === "win32" }, async () => {
    const { store } = quietStore();
    await store.append("modes", "ui", "e");
    assert.equal((await stat(channelDir(dataDir, "modes"))).mode & 0o777, 0o700);
    assert.equal((await stat(queueFile(dataDir, "modes", "ui"))).mode & 0o777, 0o600);
  });

  test("idle channels are removed, others kept, never one holding a message; remove() deletes a channel", async () => {
    const { dir, cleanup: done } = await tempDataDir();
    try {
      const store = new FileStore({ dataDir: dir, limits: { channelTtlMs: 60_000 } });
      await store.append("old", "ui", "e");
      await store.poll("old", "ui", { after: 1 });
      await store.append("old-unread", "agent", "ask");
      await store.append("fresh", "ui", "e");
      await store.poll("fresh", "ui");
      const longAgo = new Date(Date.now() - 120_000);
      await utimes(channelDir(dir, "old"), longAgo, longAgo);
      await utimes(channelDir(dir, "old-unread"), longAgo, longAgo);
      assert.deepEqual(await store.removeIdleChannels(), ["old"]);
      assert.deepEqual((await store.listChannels()).map((c) => c.id).sort(), ["fresh", "old-unread"]);
      await store.remove("fresh");
      assert.deepEqual(
        (await store.listChannels()).map((c) => c.id),
        ["old-unread"],
      );
    } finally {
      await done();
    }
  });

  test("the idle sweep removes session files untouched for as long, and keeps the others", async () => {
    const { dir, cleanup: done } = await tempDataDir();
    try {
      const store = new FileStore({ dataDir: dir, limits: { channelTtlMs: 60_000 } });
      const wall = { text: "Back soon", posted_at: new Date().toISOString(), until: new Date(Date.now() + 60_000).toISOString() };
      await store.sessions.update("claude-101", (record) => ({ ...record, wall }));
      await store.sessions.update("claude-202", (record) => ({ ...record, wall }));
      const longAgo = new Date(Date.now() - 120_000);
      await utimes(sessionFile(dir, "claude-101"), longAgo, longAgo);
      await store.removeIdleChannels();
      assert.equal((await store.sessions.read("claude-101")).wall, null, "the idle session is gone");
      assert.deepEqual((await store.sessions.read("claude-202")).wall, wall);
    } finally {
      await done();
    }
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
    // A killed holder leaves its lock folder behind and stops refreshing it.
    const lock = `${queueFile(dataDir, "stale", "ui")}.lock`;
    await mkdir(lock);
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
    const gone = spawnSync(
      process.execPath,
      ["-p", "JSON.stringify({ pid: process.pid, stat: require('fs').readFileSync('/proc/self/stat', 'utf8') })"],
      { encoding: "utf8" },
    );
    const { pid, stat } = JSON.parse(gone.stdout) as { pid: number; stat: string };
    const machine = `${(await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim()} ${await readlink("/proc/self/ns/pid")}`;
    const started = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    await writeFile(lock, JSON.stringify({ pid, machine, started, nonce: "0", beat: 0 }), { mode: 0o600 });
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

  test("a format-1 document is read, and turned into a log at the next write", async () => {
    const { store } = quietStore();
    const path = queueFile(dataDir, "format-1", "ui");
    await mkdir(channelDir(dataDir, "format-1"), { recursive: true });
    const ts = new Date().toISOString();
    await writeFile(path, JSON.stringify({ version: 1, next_seq: 8, messages: [{ seq: 7, event: "e", data: { old: true }, ts }] }));
    assert.deepEqual(
      (await store.peek("format-1", "ui")).map((m) => m.data),
      [{ old: true }],
    );
    assert.equal((await store.append("format-1", "ui", "e", { new: true })).seq, 8);
    assert.match(await readFile(path, "utf8"), /^\{"version":2,"next_seq":8\}\n/);
    assert.deepEqual(
      (await store.poll("format-1", "ui", { after: 6 })).messages.map((m) => m.seq),
      [7, 8],
    );
  });
});
