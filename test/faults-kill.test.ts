/**
 * Killing processes at the worst moments, for each store: writers killed with SIGKILL
 * under load (for the file store also while they hold the lock), and a reader killed
 * mid-poll; and, for the file store's locks, a live slow lock holder that must not be
 * broken.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { readdir } from "node:fs/promises";
import { FileStore } from "../store/file/file-store.js";
import { channelDir, queueFile } from "../core/paths.js";
import type { QueueMessage } from "../protocol/message.js";
import { readLog } from "../store/file/log-format.js";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";
import { type FixtureProcess, spawnFixture } from "./support/fixture-process.js";
import { readRest, type StoreFixture, storeKinds } from "./support/stores.js";

const STALE_MS = 2000;
const KILLS = 50;
const CONCURRENT_WRITERS = 4;

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: dataDir, cleanup } = await tempDataDir()));
after(() => cleanup());

const randomBetween = (low: number, high: number) => low + Math.random() * (high - low);

for (const kind of storeKinds()) {
  describe(`${kind.name} store`, { skip: kind.skip }, () => {
    let fixture: StoreFixture;
    before(async () => (fixture = await kind.start()));
    after(() => fixture.stop());

    describe("SIGKILL under load", () => {
      test(`${KILLS} writers killed at random moments: every acknowledged message arrives exactly once`, { timeout: 300_000 }, async (t) => {
        const channel = "kill-load";
        const env = { BACKCHANNEL_LOCK_STALE_MS: String(STALE_MS), ...fixture.env };
        const writers = new Map<string, FixtureProcess>();
        // Progress: an acknowledgement from one of `from` wakes whoever waits for it.
        const progressWaiters = new Set<{ from: Set<string>; wake: () => void }>();
        const onAck = (id: string) => {
          for (const waiter of progressWaiters) {
            if (!waiter.from.has(id)) continue;
            progressWaiters.delete(waiter);
            waiter.wake();
          }
        };
        const nextAckFrom = (from: Set<string>) => new Promise<void>((wake) => progressWaiters.add({ from, wake }));
        const startWriter = (id: string) =>
          writers.set(
            id,
            spawnFixture("looping-writer", [channel, id], env, () => onAck(id)),
          );
        let nextId = 0;
        for (let i = 0; i < CONCURRENT_WRITERS; i++) startWriter(`w${nextId++}`);

        // A cursor reader, running all along.
        const store = fixture.open();
        const received = new Map<number, QueueMessage>();
        let duplicates = 0;
        let cursor = 0;
        let stop = false;
        const reader = (async () => {
          while (!stop) {
            const result = await store.poll(channel, "agent", { after: cursor, waitMs: 100 });
            for (const message of result.messages) {
              if (received.has(message.seq)) duplicates += 1;
              received.set(message.seq, message);
            }
            cursor = result.cursor;
          }
        })();
        reader.catch(() => undefined); // awaited below; this only keeps an early failure from being "unhandled"

        let kills = 0;
        let worstStall = 0;
        let stalls = 0;
        // Over files, kills go on (up to 4×) until one has left a lock behind, which the others
        // wait out as a stall: a short append makes a kill inside the lock rare, and the
        // check below needs one.
        while (kills < KILLS || (fixture.kind === "file" && stalls === 0 && kills < 4 * KILLS)) {
          await new Promise((resolve) => setTimeout(resolve, randomBetween(20, 150)));
          // Kill only writers that are appending (past their start-up), so every kill hits work under way.
          const live = [...writers.entries()].filter(([, w]) => w.child.exitCode === null && w.child.signalCode === null && w.lines.length > 0);
          if (live.length === 0) continue;
          const [id, victim] = live[Math.floor(Math.random() * live.length)]!;
          // The stall is measured on the writers that were appending beside the victim (a
          // new writer's start-up, a second or more on a busy machine, is not a stall).
          const others = new Set(live.map(([other]) => other).filter((other) => other !== id));
          const acknowledged = others.size > 0 ? nextAckFrom(others) : undefined;
          victim.child.kill("SIGKILL");
          const killedAt = Date.now();
          await victim.exited;
          assert.equal(victim.child.signalCode, "SIGKILL", `${id} died of the kill, not of an error: ${victim.stderr()}`);
          kills += 1;
          startWriter(`w${nextId++}`);
          // How long the others stood still: near zero, unless the victim died holding the lock.
          if (acknowledged === undefined) continue;
          await acknowledged;
          const stall = Date.now() - killedAt;
          worstStall = Math.max(worstStall, stall);
          if (stall >= STALE_MS / 2) stalls += 1;
        }
        for (const writer of writers.values()) writer.child.kill("SIGKILL");
        await Promise.all([...writers.values()].map((writer) => writer.exited));

        // Drain what is left: a stale lock from the last kills may hold the reader for up to STALE_MS.
        stop = true;
        await reader;
        await readRest(store, channel, cursor, received);

        if (fixture.kind === "file") {
          // Every queue file parses, and none was moved aside as corrupt.
          assert.ok(readLog(queueFile(fixture.dataDir, channel, "agent")));
          assert.deepEqual(
            (await readdir(channelDir(fixture.dataDir, channel))).filter((name) => name.includes(".corrupt-")),
            [],
          );
        }

        let acknowledged = 0;
        const seen = new Set<string>();
        for (const message of received.values()) {
          const { writer, n } = message.data as { writer: string; n: number };
          assert.ok(!seen.has(`${writer}/${n}`), `${writer}/${n} arrived once`);
          seen.add(`${writer}/${n}`);
        }
        for (const [id, writer] of writers) {
          let lastSeq = 0;
          for (const line of writer.lines.filter((text) => !text.endsWith(" failed"))) {
            const [n, seq] = line.split(" ").map(Number) as [number, number];
            const message = received.get(seq);
            assert.deepEqual(message?.data, { writer: id, n }, `acknowledged seq ${seq} of ${id} was delivered`);
            assert.ok(seq > lastSeq, "a writer's own order is kept");
            lastSeq = seq;
            acknowledged += 1;
          }
        }
        assert.equal(duplicates, 0, "a cursor reader never saw a seq twice");
        assert.ok(acknowledged > KILLS, `${acknowledged} acknowledged messages checked`);
        if (fixture.kind === "file") {
          // The writers report each lock they broke; a lock is always broken as its holder's
          // (its record is linked in whole), never as a folder or file of unknown origin.
          const reports = [...writers.values()].flatMap((writer) => writer.stderr().split("\n")).filter((line) => line.includes("lock"));
          const brokenDead = reports.filter((line) => /broke the lock .*, left by process \d+, which is gone/.test(line)).length;
          assert.ok(brokenDead > 0, "some kills left a lock behind (killed while holding it), and it was broken as its holder's");
          assert.deepEqual(
            reports.filter((line) => !/broke the lock .*, left by process \d+, which is gone/.test(line)),
            [],
            "no other lock trouble",
          );
          // A dead holder's lock is broken once a waiter has seen it unchanged for 100 ms and
          // found its pid gone, not after the stale time; a loaded two-core machine adds its
          // scheduling delays on top, so the bound is loose.
          assert.ok(worstStall < 2.5 * STALE_MS, `the worst stall after a kill, ${worstStall} ms, stays below the stale time of ${STALE_MS} ms`);
        } else {
          // Redis holds no lock for a writer: a kill never stops the others.
          assert.ok(worstStall < STALE_MS, `the worst stall after a kill, ${worstStall} ms, is only the others' next append`);
        }
        t.diagnostic(
          `kills=${kills} acknowledged=${acknowledged} received=${received.size} stalls-over-half-the-stale-time=${stalls} worst-stall-after-a-kill=${worstStall}ms (stale=${STALE_MS}ms)`,
        );
      });
    });

    describe("a reader killed mid-poll", () => {
      test("with a cursor nothing is lost: the next poll with the same cursor gets everything", async () => {
        const app = await connectServer(fixture.dataDir, fixture.env);
        const agent = await connectServer(fixture.dataDir, fixture.env);
        try {
          await agent.callTool({ name: "notify_ui", arguments: { channel_id: "killed-reader", event: "answer", data: { n: 1 } } });
          const first = structured<{ cursor: number }>(
            await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "killed-reader", after: 0 } }),
          );
          assert.equal(first.cursor, 1);
          // The app's server dies while a long-poll with the next cursor waits, and a message lands meanwhile.
          const waiting = app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "killed-reader", after: 1, wait_ms: 10_000 } });
          waiting.catch(() => undefined);
          await agent.callTool({ name: "notify_ui", arguments: { channel_id: "killed-reader", event: "answer", data: { n: 2 } } });
          const pid = (app.transport as { pid?: number | null } | undefined)?.pid;
          assert.ok(pid, "the app's server process");
          process.kill(pid, "SIGKILL");
          await agent.callTool({ name: "notify_ui", arguments: { channel_id: "killed-reader", event: "answer", data: { n: 3 } } });
          // The host starts a new server process; the app polls again with its last cursor.
          const again = await connectServer(fixture.dataDir, fixture.env);
          try {
            const result = structured<{ messages: QueueMessage[] }>(
              await again.callTool({ name: "poll_ui_messages", arguments: { channel_id: "killed-reader", after: 1 } }),
            );
            assert.deepEqual(
              result.messages.map((m) => m.data),
              [{ n: 2 }, { n: 3 }],
            );
          } finally {
            await again.close();
          }
        } finally {
          await Promise.allSettled([app.close(), agent.close()]);
        }
      });

      test("the app's server killed mid-call again and again while the agent sends: through its cursor the app gets every message exactly once", async () => {
        const channel = "killed-servers";
        const SENT = 30;
        const agent = await connectServer(fixture.dataDir, fixture.env);
        const seen = new Map<number, unknown>();
        let duplicates = 0;
        let cursor = 0;
        const take = (result: { structuredContent?: unknown; isError?: boolean }) => {
          const { messages, cursor: next } = structured<{ messages: QueueMessage[]; cursor: number }>(result);
          for (const message of messages) {
            if (seen.has(message.seq)) duplicates += 1;
            seen.set(message.seq, message.data);
          }
          cursor = Math.max(cursor, next);
        };
        try {
          const sending = (async () => {
            for (let n = 1; n <= SENT; n++) {
              structured(await agent.callTool({ name: "notify_ui", arguments: { channel_id: channel, event: "answer", data: { n } } }));
              await new Promise((resolve) => setTimeout(resolve, randomBetween(5, 60)));
            }
          })();
          for (let round = 0; round < 6; round++) {
            const app = await connectServer(fixture.dataDir, fixture.env);
            const pid = (app.transport as { pid?: number | null } | undefined)?.pid;
            assert.ok(pid, "the app's server process");
            // Polls until the kill lands in the middle of one, at a random moment.
            const killAt = Date.now() + randomBetween(0, 300);
            const killer = new Promise<void>((resolve) =>
              setTimeout(
                () => {
                  process.kill(pid, "SIGKILL");
                  resolve();
                },
                Math.max(0, killAt - Date.now()),
              ),
            );
            let killed = false;
            void killer.then(() => (killed = true));
            while (!killed) {
              const result = await app
                .callTool({ name: "poll_ui_messages", arguments: { channel_id: channel, after: cursor, wait_ms: 2000 } })
                .catch(() => undefined);
              if (result && !result.isError) take(result);
            }
            await killer;
            await app.close().catch(() => undefined);
          }
          await sending;
          const last = await connectServer(fixture.dataDir, fixture.env);
          try {
            while (seen.size < SENT)
              take(await last.callTool({ name: "poll_ui_messages", arguments: { channel_id: channel, after: cursor, wait_ms: 2000 } }));
          } finally {
            await last.close();
          }
        } finally {
          await agent.close();
        }
        assert.equal(duplicates, 0, "a seq that reached the app never came again");
        assert.deepEqual(
          [...seen.entries()].sort(([a], [b]) => a - b).map(([, data]) => data),
          Array.from({ length: SENT }, (_, index) => ({ n: index + 1 })),
          "every message once, in order",
        );
      });

      test("read-and-clear loses what a reader drained and died with: why the app reads with a cursor", async () => {
        const store = fixture.open();
        await store.append("killed-drainer", "agent", "ask", { question: "lost?" });
        const drainer = spawnFixture("drain-and-hang", ["killed-drainer"], fixture.env);
        await drainer.waitFor("drained 1");
        drainer.child.kill("SIGKILL");
        await drainer.exited;
        assert.deepEqual((await store.poll("killed-drainer", "agent")).messages, [], "the drained message is gone with its reader");
      });
    });
  });
}

describe("file store: a live lock holder", () => {
  test("a live holder that keeps its lock past the stale time is never broken", { timeout: 60_000 }, async (t) => {
    const path = queueFile(dataDir, "slow-holder", "agent");
    const store = new FileStore({ dataDir, limits: { lockStaleMs: STALE_MS } });
    await store.append("slow-holder", "agent", "first");
    const holder = spawnFixture("lock-holder", [path, String(STALE_MS), String(2.5 * STALE_MS)]);
    await holder.waitFor("locked");
    const started = Date.now();
    await store.append("slow-holder", "agent", "second");
    const waited = Date.now() - started;
    assert.equal(await holder.exited, 0, `the holder kept its lock to the end: ${holder.stderr()}`);
    assert.deepEqual(holder.lines, ["locked", "released"]);
    // The holder had the lock for 2.5 stale periods from before our append began; breaking
    // it as stale would have let the append through after about one.
    assert.ok(waited >= 2.5 * STALE_MS - 1000, `waited ${waited} ms, until the live holder let go`);
    t.diagnostic(`waited ${waited} ms behind a live holder that held its lock for ${2.5 * STALE_MS} ms (stale=${STALE_MS} ms)`);
  });
});
