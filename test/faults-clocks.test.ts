/**
 * Processes whose clocks disagree, sharing one data directory: writers and lock holders
 * with clocks seconds to a year apart, and idle sweeps run by processes whose clocks are
 * days off. Each process is real; its clock is shifted by the preload
 * test/fixtures/shifted-clock.ts (`Date` and, where said, its view of file times), the one
 * stand-in for a fault a single machine cannot cause for real.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { readdir, stat, utimes } from "node:fs/promises";
import { channelDir, queueFile } from "../core/paths.js";
import type { QueueMessage } from "../protocol/message.js";
import { FileStore } from "../store/file/file-store.js";
import { type FixtureProcess, fixturePath, spawnFixture } from "./support/fixture-process.js";
import { connectServer, structured, tempDataDir, waitUntil } from "./support/helpers.js";

const SHIFTED_CLOCK = fixturePath("shifted-clock");
const SECOND = 1000;
const DAY = 24 * 3600 * SECOND;

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: dataDir, cleanup } = await tempDataDir()));
after(() => cleanup());

/** The environment of a process whose clock is `clockMs` off (and its view of file times `fileTimeMs`). */
function shiftedEnv(clockMs: number, fileTimeMs = 0): Record<string, string> {
  return {
    NODE_OPTIONS: `--import ${SHIFTED_CLOCK}`,
    BACKCHANNEL_TEST_CLOCK_OFFSET_MS: String(clockMs),
    BACKCHANNEL_TEST_FILE_TIME_OFFSET_MS: String(fileTimeMs),
  };
}

/** A fixture run as a child with a shifted clock (and its view of file times), with `env` added. */
function spawnShifted(script: string, args: string[], clockMs: number, env: Record<string, string> = {}, fileTimeMs = 0): FixtureProcess {
  return spawnFixture(script, args, { ...shiftedEnv(clockMs, fileTimeMs), ...env });
}

/** Runs the idle sweep once in a process whose clock is `clockMs` off; resolves with the channels it removed. */
async function sweepWithClock(clockMs: number, env: Record<string, string> = {}, fileTimeMs = 0): Promise<string[]> {
  const sweeper = spawnShifted("sweep-once", [dataDir], clockMs, env, fileTimeMs);
  assert.equal(await sweeper.exited, 0, sweeper.stderr());
  return JSON.parse(sweeper.lines[0]!) as string[];
}

describe("locks across clocks", () => {
  test("three writers on one queue, one with its clock 6 s ahead: no live lock broken, nothing lost, no seq twice", {
    timeout: 180_000,
  }, async (t) => {
    const channel = "skewed-writers";
    const offsets = { a: 0, b: 0, ahead: 6 * SECOND };
    const writers = Object.entries(offsets).map(([id, offset]) => ({
      id,
      process: spawnShifted("looping-writer", [channel, id], offset, { BACKCHANNEL_HOME: dataDir }),
    }));
    const store = new FileStore({ dataDir });
    const received = new Map<number, QueueMessage>();
    let duplicates = 0;
    let cursor = 0;
    const acknowledged = () => writers.reduce((sum, writer) => sum + writer.process.lines.length, 0);
    const started = Date.now();
    // Read as the app does, until the writers together have had 600 appends acknowledged (or 30 s passed, or one died).
    const anyDead = () => writers.some((writer) => writer.process.child.exitCode !== null);
    while (acknowledged() < 600 && Date.now() - started < 30 * SECOND && !anyDead()) {
      const result = await store.poll(channel, "agent", { after: cursor, waitMs: 100 });
      for (const message of result.messages) {
        if (received.has(message.seq)) duplicates += 1;
        received.set(message.seq, message);
      }
      cursor = result.cursor;
    }
    for (const writer of writers) writer.process.child.kill("SIGKILL");
    await Promise.all(writers.map((writer) => writer.process.exited));
    for (;;) {
      const result = await store.poll(channel, "agent", { after: cursor });
      for (const message of result.messages) received.set(message.seq, message);
      cursor = result.cursor;
      if (result.messages.length === 0) break;
    }

    for (const writer of writers) {
      assert.equal(writer.process.child.signalCode, "SIGKILL", `writer ${writer.id} died of the kill, not of an error: ${writer.process.stderr()}`);
      assert.doesNotMatch(writer.process.stderr(), /broke the lock/, `writer ${writer.id} broke no lock`);
    }
    const seqsGiven = new Map<number, string>();
    let lost = 0;
    for (const writer of writers) {
      for (const line of writer.process.lines) {
        const [n, seq] = line.split(" ").map(Number) as [number, number];
        assert.ok(!seqsGiven.has(seq), `seq ${seq} handed out to ${seqsGiven.get(seq)} and to ${writer.id}/${n}`);
        seqsGiven.set(seq, `${writer.id}/${n}`);
        if (JSON.stringify(received.get(seq)?.data) !== JSON.stringify({ writer: writer.id, n })) lost += 1;
      }
    }
    assert.equal(lost, 0, "every acknowledged message was delivered");
    assert.equal(duplicates, 0, "a cursor reader never saw a seq twice");
    assert.deepEqual(
      (await readdir(channelDir(dataDir, channel))).filter((name) => name.includes(".corrupt-")),
      [],
      "no queue file was taken for corrupt",
    );
    assert.ok(acknowledged() >= 100, `${acknowledged()} appends acknowledged`);
    t.diagnostic(`acknowledged=${acknowledged()} delivered=${received.size} lost=${lost} duplicates=${duplicates} in ${Date.now() - started} ms`);
  });

  test("a live holder whose clock is a year behind is never broken by a waiter whose clock is a year ahead", { timeout: 60_000 }, async (t) => {
    const staleMs = 2000;
    const holdMs = 2.5 * staleMs;
    const path = queueFile(dataDir, "skewed-holder", "agent");
    await new FileStore({ dataDir }).append("skewed-holder", "agent", "first");
    const holder = spawnShifted("lock-holder", [path, String(staleMs), String(holdMs)], -365 * DAY);
    await holder.until(() => holder.lines.includes("locked"));
    const waitStarted = Date.now();
    const writer = spawnShifted("writer", ["skewed-holder", "late", "1"], 365 * DAY, {
      BACKCHANNEL_HOME: dataDir,
      BACKCHANNEL_LOCK_STALE_MS: String(staleMs),
    });
    assert.equal(await writer.exited, 0, writer.stderr());
    const waited = Date.now() - waitStarted;
    assert.equal(await holder.exited, 0, `the holder kept its lock to the end: ${holder.stderr()}`);
    assert.deepEqual(holder.lines, ["locked", "released"]);
    assert.doesNotMatch(writer.stderr(), /broke the lock/);
    // The writer started after the holder had the lock, so it waited for the rest of the hold at least.
    assert.ok(waited >= holdMs - 2 * staleMs, `waited ${waited} ms behind a live holder that held its lock for ${holdMs} ms`);
    t.diagnostic(`the writer a year ahead waited ${waited} ms for the holder a year behind (stale time ${staleMs} ms)`);
  });
});

describe("the idle sweep across clocks", () => {
  test("a sweep by a process 8 days ahead keeps a live channel: unread questions and an app long-polling it", { timeout: 60_000 }, async () => {
    const app = await connectServer(dataDir);
    const agent = await connectServer(dataDir);
    try {
      for (let n = 1; n <= 3; n++) {
        await app.callTool({ name: "notify_agent", arguments: { channel_id: "live", event: "ask", data: { n } } });
      }
      const waiting = app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "live", after: 0, wait_ms: 30_000 } });
      assert.deepEqual(await sweepWithClock(8 * DAY), [], "a clock 8 days ahead");
      assert.deepEqual(await sweepWithClock(8 * DAY, {}, 8 * DAY), [], "a clock and a view of file times 8 days ahead");
      await agent.callTool({ name: "notify_ui", arguments: { channel_id: "live", event: "answer", data: { text: "still here" } } });
      const answered = structured<{ messages: QueueMessage[] }>(await waiting);
      assert.deepEqual(
        answered.messages.map((m) => m.data),
        [{ text: "still here" }],
        "the long-poll was answered",
      );
      const questions = structured<{ messages: QueueMessage[] }>(
        await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "live" } }),
      );
      assert.deepEqual(
        questions.messages.map((m) => m.data),
        [{ n: 1 }, { n: 2 }, { n: 3 }],
        "the three questions are all there",
      );
    } finally {
      await Promise.allSettled([app.close(), agent.close()]);
    }
  });

  test("a poll by a process 8 days behind does not make its channel look idle", { timeout: 60_000 }, async () => {
    const behind = await connectServer(dataDir, shiftedEnv(-8 * DAY));
    try {
      // The app's server, long-polling as the app does all day.
      for (let poll = 0; poll < 2; poll++) {
        await behind.callTool({ name: "poll_ui_messages", arguments: { channel_id: "polled-from-behind", after: 0, wait_ms: 1000 } });
      }
    } finally {
      await behind.close();
    }
    assert.deepEqual(await sweepWithClock(0), [], "an honest clock");
    assert.deepEqual(await sweepWithClock(-8 * DAY), [], "a clock 8 days behind");
  });

  test("a channel idle for 8 days by the file system's clock is removed, whatever the sweeper's clock", { timeout: 60_000 }, async () => {
    const store = new FileStore({ dataDir });
    const makeIdle = async (id: string) => {
      await store.append(id, "ui", "e");
      await store.poll(id, "ui", { after: 1 });
      const eightDaysAgo = new Date(Date.now() - 8 * DAY);
      await utimes(channelDir(dataDir, id), eightDaysAgo, eightDaysAgo);
    };
    await makeIdle("idle-behind");
    assert.ok((await sweepWithClock(-8 * DAY)).includes("idle-behind"), "a sweeper 8 days behind still finds it idle");
    await makeIdle("idle-ahead");
    assert.ok(
      (await sweepWithClock(8 * DAY, {}, -3 * DAY)).includes("idle-ahead"),
      "and so does one 8 days ahead that sees file times 3 days behind",
    );
  });

  test("a poll that waits keeps its channel even when the TTL is shorter than the wait", { timeout: 60_000 }, async () => {
    const ttl = { BACKCHANNEL_CHANNEL_TTL_MS: "2000" };
    const app = await connectServer(dataDir, ttl);
    try {
      const began = Date.now();
      const waiting = app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "short-ttl", after: 0, wait_ms: 8000 } });
      // Once the wait has lasted longer than the TTL, the channel must have been marked since:
      // else it would look idle now.
      await waitUntil(
        async () => (await stat(channelDir(dataDir, "short-ttl"))).mtimeMs > began + 2000,
        "the waiting poll's channel marked again once the TTL had passed",
      );
      assert.deepEqual(await sweepWithClock(0, ttl), [], "the channel of a waiting poll is not swept");
      await waiting;
    } finally {
      await app.close();
    }
  });
});
