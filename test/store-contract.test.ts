/**
 * The store contract, in one process, run unchanged against both stores (the file store
 * in a temporary data directory, the Redis store on a real redis-server and on a real
 * Redis Cluster of three primaries and three replicas): seq, cursors,
 * read-and-clear, limits and their errors, channel ids, long-polls, state documents,
 * sessions, saved apps, and the idle sweep. What only one store has (files, locks, the log format)
 * is tested in store.test.ts and redis-store.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { InvalidAppNameError, InvalidChannelIdError } from "../core/ids.js";
import { APP_HTML_MAX_BYTES, SAVED_APP_MAX_BYTES } from "../core/limits.js";
import { type SavedApp, SavedAppTooLargeError } from "../store/saved-app.js";
import { InvalidCursorError, InvalidReaderError, MessageTooLargeError, QueueFullError, StateTooLargeError } from "../store/errors.js";
import { MAX_READERS, READER_LEASE_MS } from "../store/readers.js";
import { messageBytes } from "../store/validate.js";
import { PrincipalUsage, withPrincipalLimits } from "../store/principal-limits.js";
import type { ChannelStore } from "../store/store.js";
import { isEpoch, NO_EPOCH } from "../protocol/epoch.js";
import { clusterStoreKind, type StoreFixture, storeKinds } from "./support/stores.js";

for (const kind of [...storeKinds(), clusterStoreKind()]) {
  describe(`${kind.name} store`, { skip: kind.skip }, () => {
    let fixture: StoreFixture;
    before(async () => (fixture = await kind.start()));
    after(() => fixture.stop());

    describe("seq", () => {
      test("starts at 1, grows by one, and is never reused after a drain", async () => {
        const store = fixture.open();
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
        const store = fixture.open();
        await store.append("shape", "agent", "ask", { question: "why?", nested: [1, "two", { three: null }], emoji: "🦉 naïve" });
        const [message] = (await store.poll("shape", "agent")).messages;
        assert.equal(message?.event, "ask");
        assert.deepEqual(message?.data, { question: "why?", nested: [1, "two", { three: null }], emoji: "🦉 naïve" });
        assert.ok(!Number.isNaN(Date.parse(message!.ts)) && message!.ts.endsWith("Z"));
      });

      test("the two queues of a channel count their seqs apart", async () => {
        const store = fixture.open();
        await store.append("two-queues", "ui", "e");
        await store.append("two-queues", "ui", "e");
        assert.equal((await store.append("two-queues", "agent", "e")).seq, 1);
      });

      test("data defaults to {}", async () => {
        const store = fixture.open();
        await store.append("default-data", "ui", "e");
        assert.deepEqual((await store.peek("default-data", "ui"))[0]?.data, {});
      });
    });

    describe("channels", () => {
      test("hasChannel: not before the first write, after it (a state document counts too), not after removal", async () => {
        const store = fixture.open();
        assert.equal(await store.hasChannel("has-channel"), false);
        await store.append("has-channel", "agent", "ready");
        assert.equal(await store.hasChannel("has-channel"), true);
        await store.remove("has-channel");
        assert.equal(await store.hasChannel("has-channel"), false);
        await store.updateState("has-state", "reader", () => ({ title: "t" }));
        assert.equal(await store.hasChannel("has-state"), true);
      });
    });

    describe("cursor reads", () => {
      test("delete <= after, return > after, and a repeated cursor returns the same messages", async () => {
        const store = fixture.open();
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

      test("a negative or fractional cursor is refused", async () => {
        const store = fixture.open();
        await assert.rejects(store.poll("bad-cursor", "ui", { after: -1 }), InvalidCursorError);
        await assert.rejects(store.poll("bad-cursor", "ui", { after: 1.5 }), InvalidCursorError);
        await assert.rejects(store.poll("bad-cursor", "ui", { after: Number.MAX_SAFE_INTEGER + 2 }), InvalidCursorError);
      });

      test("a cursor above the last seq handed out moves nothing: it acknowledges nothing and gets the queue from its start", async () => {
        const store = fixture.open();
        assert.deepEqual(
          await store.poll("ahead", "ui", { after: 40 }),
          { messages: [], cursor: 0, pending: 0, epoch: NO_EPOCH },
          "an empty queue: cursor 0",
        );
        assert.equal((await store.append("ahead", "ui", "e", { n: 1 })).seq, 1, "the seq did not move");
        const ahead = await store.poll("ahead", "ui", { after: Number.MAX_SAFE_INTEGER });
        assert.deepEqual(
          ahead.messages.map((m) => m.data),
          [{ n: 1 }],
          "from the start",
        );
        assert.equal(ahead.cursor, 1, "the cursor to go on with is below the one given");
        assert.equal((await store.peek("ahead", "ui")).length, 1, "nothing acknowledged");
        assert.equal((await store.append("ahead", "ui", "e", { n: 2 })).seq, 2);
        assert.deepEqual(
          (await store.poll("ahead", "ui", { after: 1 })).messages.map((m) => m.seq),
          [2],
        );
      });
    });

    describe("readers", () => {
      /** One reader of a queue, polling as an app does: its cursor and epoch from its last poll. */
      class Reader {
        cursor = 0;
        epoch: string | undefined;
        readonly seqs: number[] = [];
        missed = 0;
        constructor(
          readonly store: ChannelStore,
          readonly channelId: string,
          readonly id: string,
        ) {}
        async poll(): Promise<void> {
          const result = await this.store.poll(this.channelId, "ui", { after: this.cursor, epoch: this.epoch, reader: this.id });
          this.seqs.push(...result.messages.map((message) => message.seq));
          if (result.missed) this.missed += 1;
          this.cursor = result.cursor;
          this.epoch = result.epoch;
        }
      }
      const kept = async (store: ChannelStore, channelId: string) => (await store.peek(channelId, "ui")).map((message) => message.seq);

      test("two readers of one queue each receive every message, in order; a message goes once both acknowledged it", async () => {
        const store = fixture.open();
        // The channel exists (an app opened it) before its readers' first polls.
        await store.append("two-readers", "agent", "ready");
        const [chat, tab] = [new Reader(store, "two-readers", "chat-reader-1"), new Reader(store, "two-readers", "tab-reader-22")];
        await chat.poll();
        await tab.poll();
        for (let n = 1; n <= 12; n++) {
          await store.append("two-readers", "ui", "answer", { n });
          // The chat reads after every message, the tab after every third: the chat acknowledges first each time.
          await chat.poll();
          if (n % 3 === 0) await tab.poll();
          if (n === 7) assert.deepEqual(await kept(store, "two-readers"), [4, 5, 6, 7], "the chat acknowledged 6, the tab 3");
        }
        await chat.poll();
        assert.deepEqual(await kept(store, "two-readers"), [10, 11, 12], "the chat acknowledged 12, the tab 9");
        await tab.poll();
        assert.deepEqual(await kept(store, "two-readers"), [], "both acknowledged 12: nothing is kept");
        const every = Array.from({ length: 12 }, (_, i) => i + 1);
        assert.deepEqual(chat.seqs, every);
        assert.deepEqual(tab.seqs, every);
        assert.equal(chat.missed + tab.missed, 0);
      });

      test("a reader not seen for the lease stops holding messages back, and is told it missed them when it comes back", async () => {
        let now = Date.now();
        const store = fixture.open({ now: () => now, limits: { maxQueueMessages: 3 } });
        await store.append("lease", "agent", "ready");
        const [staying, gone] = [new Reader(store, "lease", "staying-reader"), new Reader(store, "lease", "gone-reader-1")];
        await staying.poll();
        await gone.poll();
        for (let n = 1; n <= 3; n++) await store.append("lease", "ui", "answer", { n });
        await staying.poll();
        await staying.poll();
        assert.deepEqual(await kept(store, "lease"), [1, 2, 3], "held for the reader that has not read them");
        await assert.rejects(store.append("lease", "ui", "answer", { n: 4 }), QueueFullError, "a full queue refuses while a live reader holds it");
        // A second each side of the lease: Redis reads this clock as a shift on its own, which
        // moves on by the call's latency (milliseconds on a loaded machine).
        now += READER_LEASE_MS - 1_000;
        await staying.poll();
        assert.deepEqual(await kept(store, "lease"), [1, 2, 3], "still within the lease");
        now += 2_000;
        await staying.poll();
        assert.deepEqual(await kept(store, "lease"), [], "past the lease, the gone reader holds nothing back");
        assert.equal((await store.append("lease", "ui", "answer", { n: 4 })).seq, 4, "and the queue takes messages again");
        await gone.poll();
        assert.equal(gone.missed, 1, "told it missed messages");
        assert.deepEqual(gone.seqs, [4], "and given what is still kept");
        await gone.poll();
        assert.equal(gone.missed, 1, "told once");
        await staying.poll();
        assert.deepEqual(await kept(store, "lease"), [4], "the staying reader acknowledged 3 only");
        await staying.poll();
        assert.deepEqual(await kept(store, "lease"), [], "both acknowledged 4");
        assert.deepEqual(staying.seqs, [1, 2, 3, 4]);
      });

      test(`at most ${MAX_READERS} readers hold a queue: the one seen longest ago is dropped, and told when it missed something`, async () => {
        let now = Date.now();
        const store = fixture.open({ now: () => now });
        const readers = Array.from({ length: MAX_READERS + 1 }, (_, i) => new Reader(store, "many-readers", `many-reader-${i}`));
        await store.append("many-readers", "ui", "answer", { n: 1 });
        for (const reader of readers) {
          await reader.poll();
          now += 1;
        }
        await store.append("many-readers", "ui", "answer", { n: 2 });
        for (const reader of readers.slice(1)) {
          await reader.poll();
          await reader.poll();
        }
        assert.deepEqual(await kept(store, "many-readers"), [], "the first reader's record was dropped: it holds nothing");
        await readers[0]!.poll();
        assert.equal(readers[0]!.missed, 1);
        assert.deepEqual(readers[0]!.seqs, [1]);
        assert.ok(readers.slice(1).every((reader) => reader.missed === 0 && reader.seqs.join() === "1,2"));
      });

      test("a poll that names no reader is one shared reader, which holds messages as a named one does", async () => {
        const store = fixture.open();
        await store.append("default-reader", "agent", "ready");
        const named = new Reader(store, "default-reader", "named-reader");
        await named.poll();
        await store.poll("default-reader", "ui", { after: 0 });
        await store.append("default-reader", "ui", "answer", { n: 1 });
        await named.poll();
        await named.poll();
        assert.deepEqual(await kept(store, "default-reader"), [1], "held for the reader that named none");
        const old = await store.poll("default-reader", "ui", { after: 0 });
        assert.deepEqual(
          old.messages.map((message) => message.seq),
          [1],
        );
        await store.poll("default-reader", "ui", { after: 1 });
        assert.deepEqual(await kept(store, "default-reader"), []);
      });

      test("a reader id that is not one is refused before anything is touched", async () => {
        const store = fixture.open();
        await store.append("bad-reader", "ui", "e");
        const before = await fixture.contents();
        for (const reader of ["short", "x".repeat(33), "a/b/c/d/e", "readers~1", ""])
          await assert.rejects(
            store.poll("bad-reader", "ui", { after: 0, reader }),
            (error: unknown) => error instanceof InvalidReaderError && error.code === "INVALID_CURSOR",
          );
        assert.deepEqual(await fixture.contents(), before);
      });
    });

    describe("epochs", () => {
      test("none before a queue's first write; minted by it, kept while the queue lives; a new one once it starts again", async () => {
        const store = fixture.open();
        assert.equal((await store.poll("epoch-life", "ui", { after: 0 })).epoch, NO_EPOCH);
        assert.deepEqual(await store.snapshot("epoch-life", "ui"), { messages: [], epoch: NO_EPOCH });
        await store.append("epoch-life", "ui", "e", { n: 1 });
        const first = (await store.snapshot("epoch-life", "ui")).epoch;
        assert.ok(isEpoch(first) && first !== NO_EPOCH, `a minted epoch, not ${JSON.stringify(first)}`);
        assert.equal((await store.snapshot("epoch-life", "agent")).epoch, NO_EPOCH, "each queue has its own");
        for (let n = 2; n <= 30; n++) await store.append("epoch-life", "ui", "e", { n, pad: "x".repeat(4000) });
        assert.equal((await store.poll("epoch-life", "ui", { after: 10 })).epoch, first, "acknowledging keeps it");
        assert.equal((await store.poll("epoch-life", "ui")).epoch, first, "draining keeps it");
        assert.equal((await store.poll("epoch-life", "ui", { after: 30, epoch: first })).epoch, first);
        await store.append("epoch-life", "ui", "e");
        assert.equal((await store.snapshot("epoch-life", "ui")).epoch, first, "an append to a drained queue keeps it");
        await store.remove("epoch-life");
        assert.equal((await store.append("epoch-life", "ui", "e")).seq, 1, "the channel made again starts at seq 1");
        const second = await store.snapshot("epoch-life", "ui");
        assert.notEqual(second.epoch, first, "… in a new epoch");
        assert.equal((await store.poll("epoch-life", "ui", { after: 0 })).epoch, second.epoch);
      });

      // A principal's view behind its limits passes the epoch on as the store takes it (a wrapper that dropped it would acknowledge across epochs).
      const views: [string, (store: ChannelStore) => ChannelStore][] = [
        ["", (store) => store],
        [
          " (a principal's view, behind its limits)",
          (store) => withPrincipalLimits(store.forPrincipal("0".repeat(32)), new PrincipalUsage(store.limits)),
        ],
      ];
      for (const [where, viewOf] of views) {
        test(`a cursor of another epoch acknowledges nothing and gets the queue from its start; one of the queue's own acknowledges${where}`, async () => {
          const store = viewOf(fixture.open());
          for (let n = 1; n <= 20; n++) await store.append("epoch-cursor", "ui", "e", { n });
          const seen = await store.poll("epoch-cursor", "ui", { after: 0 });
          assert.equal(seen.cursor, 20);
          // The queue starts again under its reader (Redis restarted empty, the folder made anew): 25 new messages.
          await store.remove("epoch-cursor");
          for (let n = 1; n <= 25; n++) await store.append("epoch-cursor", "ui", "e", { n: 100 + n });
          const next = await store.poll("epoch-cursor", "ui", { after: seen.cursor, epoch: seen.epoch });
          assert.notEqual(next.epoch, seen.epoch);
          assert.deepEqual(
            next.messages.map((m) => m.seq),
            Array.from({ length: 25 }, (_, i) => i + 1),
            "every new message, from the start",
          );
          assert.equal(next.cursor, 25);
          assert.equal((await store.peek("epoch-cursor", "ui")).length, 25, "nothing acknowledged by the old cursor");
          const acked = await store.poll("epoch-cursor", "ui", { after: 25, epoch: next.epoch });
          assert.deepEqual(acked.messages, []);
          assert.equal((await store.peek("epoch-cursor", "ui")).length, 0, "a cursor of the queue's own epoch acknowledges");
          // An empty queue answers a foreign cursor with its own last seq.
          const empty = await store.poll("epoch-cursor", "ui", { after: 3, epoch: seen.epoch });
          assert.deepEqual(empty, { messages: [], cursor: 25, pending: 0, epoch: next.epoch });
        });
      }

      test("a waiting poll with a cursor of another epoch returns the new queue's messages at once", async () => {
        const store = fixture.open();
        await store.append("epoch-wait", "agent", "e");
        const old = await store.poll("epoch-wait", "agent", { after: 0 });
        await store.remove("epoch-wait");
        await store.append("epoch-wait", "agent", "e", { fresh: true });
        const started = Date.now();
        const result = await store.poll("epoch-wait", "agent", { after: 5, epoch: old.epoch, waitMs: 20_000 });
        assert.deepEqual(
          result.messages.map((m) => m.data),
          [{ fresh: true }],
        );
        assert.ok(Date.now() - started < 10_000, "it did not wait");
      });

      test("an epoch that is not one is refused, and changes nothing", async () => {
        const store = fixture.open();
        await store.append("bad-epoch", "ui", "e");
        for (const epoch of ["a/b", "x".repeat(33), "é"])
          await assert.rejects(store.poll("bad-epoch", "ui", { after: 1, epoch }), InvalidCursorError);
        assert.equal((await store.peek("bad-epoch", "ui")).length, 1);
      });
    });

    describe("read-and-clear", () => {
      test("returns everything pending once", async () => {
        const store = fixture.open();
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
        const store = fixture.open({ limits: { maxBatchBytes: 300 } });
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

      test("a cursor read is batched the same way, and one message larger than a batch still comes", async () => {
        const store = fixture.open({ limits: { maxBatchBytes: 300 } });
        await store.append("batch-cursor", "ui", "e", { text: "y".repeat(500) });
        // Each of these is about 130 bytes of JSON: two fit in a batch of 300.
        for (let n = 2; n <= 4; n++) await store.append("batch-cursor", "ui", "e", { text: "x".repeat(60) });
        const first = await store.poll("batch-cursor", "ui", { after: 0 });
        assert.deepEqual(
          first.messages.map((m) => m.seq),
          [1],
        );
        assert.equal(first.pending, 3);
        const second = await store.poll("batch-cursor", "ui", { after: first.cursor });
        assert.deepEqual(
          second.messages.map((m) => m.seq),
          [2, 3],
        );
        assert.equal(second.pending, 1);
      });
    });

    describe("limits", () => {
      test("a message over maxMessageBytes is refused and nothing queued is lost", async () => {
        const store = fixture.open({ limits: { maxMessageBytes: 100 } });
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
        const store = fixture.open({ limits: { maxQueueMessages: 3 } });
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
        const store = fixture.open({ limits: { maxQueueBytes: 400 } });
        await store.append("bytes", "ui", "e", { text: "x".repeat(150) });
        await assert.rejects(store.append("bytes", "ui", "e", { text: "y".repeat(300) }), (error: unknown) => {
          assert.ok(error instanceof QueueFullError);
          assert.equal(error.limit, "bytes");
          assert.match(error.message, /is full \(400 bytes\): the app is not reading it/);
          return true;
        });
        assert.equal((await store.peek("bytes", "ui")).length, 1);
      });

      test("both stores count a queue's bytes alike: the same messages fit, to the byte", async () => {
        // Three of these messages are 3 × 114 bytes (JSON of the whole message: store/validate.ts messageBytes).
        const data = { text: "z".repeat(50), unicode: "é" };
        const store = fixture.open({ limits: { maxQueueBytes: 3 * messageBytes({ seq: 1, event: "e", data, ts: new Date().toISOString() }) } });
        for (let n = 0; n < 3; n++) await store.append("exact", "ui", "e", data);
        await assert.rejects(store.append("exact", "ui", "e", data), QueueFullError);
        await store.poll("exact", "ui", { after: 1 });
        assert.equal((await store.append("exact", "ui", "e", data)).seq, 4, "an acknowledged message frees its bytes");
      });

      test("an invalid event name or data is refused", async () => {
        const store = fixture.open();
        await assert.rejects(store.append("event", "ui", "has space"), /invalid event name/);
        await assert.rejects(store.append("event", "ui", "e", { n: Number.NaN }), /invalid data: numbers must be finite/);
      });
    });

    describe("channel ids", () => {
      for (const bad of ["../x", "a/b", "", "x".repeat(65), "a\u0000b", "..", "a b", "é", "a{b}c", "*"]) {
        test(`${JSON.stringify(bad)} is refused before anything is touched`, async () => {
          const store = fixture.open();
          const before = await fixture.contents();
          await assert.rejects(store.append(bad, "ui", "e"), InvalidChannelIdError);
          await assert.rejects(store.poll(bad, "ui"), InvalidChannelIdError);
          await assert.rejects(store.peek(bad, "ui"), InvalidChannelIdError);
          await assert.rejects(store.remove(bad), InvalidChannelIdError);
          await assert.rejects(store.readState(bad, "doc"), InvalidChannelIdError);
          assert.throws(() => store.watchQueue(bad, "ui"), InvalidChannelIdError);
          assert.deepEqual(await fixture.contents(), before, "nothing was created");
        });
      }

      test("64 characters is accepted", async () => {
        const store = fixture.open();
        assert.equal((await store.append("y".repeat(64), "ui", "e")).seq, 1);
      });

      test("a channel never written peeks empty", async () => {
        const store = fixture.open();
        assert.deepEqual(await store.peek("never-written", "agent"), []);
      });
    });

    describe("long-poll", () => {
      test("a waiting poll returns as soon as a message lands, and an abort ends the wait", async () => {
        const store = fixture.open({ fallbackWakeMs: 60_000 });
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

      test("a wait with no message returns empty when its time is up, and says once that it waits", async () => {
        const store = fixture.open();
        let waiting = 0;
        const result = await store.poll("wait-empty", "ui", { after: 0, waitMs: 50, onWaiting: () => (waiting += 1) });
        assert.deepEqual(result.messages, []);
        assert.equal(waiting, 1);
      });

      test("a message written by another store object (as by another process) wakes the wait; no fallback timer involved", async () => {
        const reader = fixture.open({ fallbackWakeMs: 60_000 });
        const writer = fixture.open();
        for (let round = 1; round <= 5; round++) {
          const waiting = reader.poll("wake-other", "agent", { after: round - 1, waitMs: 20_000 });
          // Sent while the wait is being set up as often as after it: no wake-up may be lost.
          setTimeout(() => void writer.append("wake-other", "agent", "ask", { round }), round % 2 === 0 ? 0 : 30);
          const started = Date.now();
          const result = await waiting;
          assert.deepEqual(
            result.messages.map((m) => m.data),
            [{ round }],
          );
          assert.ok(Date.now() - started < 10_000, `round ${round} woke in ${Date.now() - started} ms`);
        }
      });

      test("watchQueue reports a change made before the first wait (subscribe, read, then wait)", async () => {
        const store = fixture.open();
        const subscription = store.watchQueue("watch-early", "agent");
        try {
          await store.append("watch-early", "agent", "ask");
          assert.equal(await subscription.next(10_000), "changed");
        } finally {
          subscription.close();
        }
      });
    });

    describe("state documents and sessions", () => {
      test("updateState replaces atomically and readState reads it back", async () => {
        const store = fixture.open({ limits: { maxStateBytes: 64 } });
        assert.equal(await store.readState("state", "doc"), null);
        await store.updateState("state", "doc", () => ({ title: "t" }));
        await store.updateState("state", "doc", (current) => ({ ...(current as object), n: 1 }));
        assert.deepEqual(await store.readState("state", "doc"), { title: "t", n: 1 });
        await assert.rejects(
          store.updateState("state", "doc", () => "x".repeat(100)),
          (error: unknown) => error instanceof StateTooLargeError && /limit is 64/.test(error.message),
        );
        assert.deepEqual(await store.readState("state", "doc"), { title: "t", n: 1 });
        await assert.rejects(store.readState("state", "../x"), /invalid state name/);
      });

      test("concurrent updates of one document lose none", async () => {
        const stores = [fixture.open(), fixture.open(), fixture.open()];
        await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            stores[index % 3]!.updateState("state-race", "counter", (current) => ({ n: ((current as { n?: number } | null)?.n ?? 0) + 1 })),
          ),
        );
        assert.deepEqual(await stores[0]!.readState("state-race", "counter"), { n: 30 });
      });

      test("an update that throws changes nothing", async () => {
        const store = fixture.open();
        await store.updateState("state-throw", "doc", () => ({ v: 1 }));
        await assert.rejects(
          store.updateState("state-throw", "doc", () => {
            throw new Error("no");
          }),
          /no/,
        );
        assert.deepEqual(await store.readState("state-throw", "doc"), { v: 1 });
      });

      test("session records: empty until written, changed atomically, watched", async () => {
        const store = fixture.open();
        assert.deepEqual(await store.sessions.read("claude-4242-00000000000000004242"), { channels: [], wall: null });
        const subscription = store.sessions.watch("claude-4242-00000000000000004242");
        try {
          const wall = { text: "Back soon", posted_at: new Date().toISOString(), until: new Date(Date.now() + 60_000).toISOString() };
          await Promise.all([
            store.sessions.update("claude-4242-00000000000000004242", (record) => ({ ...record, wall })),
            store.sessions.update("claude-4242-00000000000000004242", (record) => ({
              ...record,
              channels: [...record.channels, { id: "c1", app: "reader" }],
            })),
          ]);
          assert.deepEqual(await store.sessions.read("claude-4242-00000000000000004242"), { channels: [{ id: "c1", app: "reader" }], wall });
          assert.equal(await subscription.next(10_000), "changed");
        } finally {
          subscription.close();
        }
        assert.throws(() => store.sessions.watch("../x"), /invalid session key/);
        await assert.rejects(store.sessions.read("nope"), /invalid session key/);
      });
    });

    describe("saved apps", () => {
      const app = (name: string, html = "<p>app</p>"): SavedApp => ({ name, title: "T", description: "D", html, saved_at: new Date().toISOString() });

      test("write, read, list by name, remove; kept by the idle sweep", async () => {
        const own = await fixture.fresh();
        const store = own.open({ limits: { channelTtlMs: 60_000 } });
        assert.equal(await store.apps.read("a"), null);
        assert.deepEqual(await store.apps.summaries(await store.apps.names()), []);
        await store.apps.write(app("b"));
        await store.apps.write(app("a"));
        assert.deepEqual((await store.apps.read("a"))?.html, "<p>app</p>");
        await store.removeIdleChannels(Date.now() + 365 * 24 * 3600 * 1000);
        assert.deepEqual(
          (await store.apps.summaries(await store.apps.names())).map((saved) => saved.name),
          ["a", "b"],
        );
        assert.equal(await store.apps.remove("a"), true);
        assert.equal(await store.apps.remove("a"), false);
        assert.equal(await store.apps.read("a"), null);
      });

      test("a listing's summaries come from each record's head, whatever its title and note hold", async () => {
        const store = fixture.open();
        const html = "<p>big</p>".repeat(20_000);
        await store.apps.write({ ...app("summary-new", html), title: 'A "quoted", \\ title \u2028', description: ',"html":"not the key' });
        await store.apps.write({ ...app("summary-small"), description: "é".repeat(1000) });
        const summaries = await store.apps.summaries(["summary-new", "summary-gone", "summary-small"]);
        assert.deepEqual(summaries, [
          { name: "summary-new", title: 'A "quoted", \\ title \u2028', description: ',"html":"not the key' },
          { name: "summary-small", title: "T", description: "é".repeat(1000) },
        ]);
        assert.equal((await store.apps.read("summary-new"))?.html, html, "the HTML is kept whole");
      });

      test("a name is checked before anything is touched", async () => {
        const store = fixture.open();
        for (const name of ["", "..", "../x", "a/b", "a b", "x".repeat(65), "é", "a}b"]) {
          await assert.rejects(store.apps.read(name), InvalidAppNameError, JSON.stringify(name));
          await assert.rejects(store.apps.write(app(name)), InvalidAppNameError, JSON.stringify(name));
          await assert.rejects(store.apps.remove(name), InvalidAppNameError, JSON.stringify(name));
        }
      });

      test(`an app over ${SAVED_APP_MAX_BYTES} bytes of JSON is refused; the one saved before stays`, async () => {
        const store = fixture.open();
        await store.apps.write(app("big", "<p>small</p>"));
        await store.apps.write(app("big", '"'.repeat(APP_HTML_MAX_BYTES)));
        await assert.rejects(store.apps.write(app("big", "x".repeat(SAVED_APP_MAX_BYTES))), SavedAppTooLargeError);
        assert.equal((await store.apps.read("big"))?.html.length, APP_HTML_MAX_BYTES);
      });
    });

    describe("channels and the idle sweep", () => {
      test("idle channels are removed, others kept; remove() deletes a channel", async () => {
        const own = await fixture.fresh();
        const store = own.open({ limits: { channelTtlMs: 60_000 } });
        await store.append("old", "ui", "e");
        await store.poll("old", "ui");
        await store.append("fresh", "ui", "e");
        await store.updateState("fresh", "doc", () => ({ kept: true }));
        await own.makeIdle("old", 120_000);
        assert.deepEqual(await store.removeIdleChannels(), ["old"]);
        assert.deepEqual(
          (await store.listChannels()).map((c) => c.id),
          ["fresh"],
        );
        const [fresh] = await store.listChannels();
        assert.ok(Math.abs(fresh!.lastActivity.getTime() - Date.now()) < 60_000, "lastActivity is recent");
        await store.remove("fresh");
        assert.deepEqual(await store.listChannels(), []);
        assert.equal(await store.readState("fresh", "doc"), null, "its state went with it");
        await store.remove("never-was");
      });

      test("a channel holding an unread message is never swept, however long idle", async () => {
        const own = await fixture.fresh();
        const store = own.open({ limits: { channelTtlMs: 60_000 } });
        await store.append("unread", "agent", "ask", { question: "still there?" });
        await own.makeIdle("unread", 120_000);
        assert.deepEqual(await store.removeIdleChannels(Date.now() + 365 * 24 * 3600 * 1000), []);
        assert.deepEqual(
          (await store.peek("unread", "agent")).map((m) => m.data),
          [{ question: "still there?" }],
        );
      });

      test("the idle sweep removes session records untouched for as long, and keeps the others", async () => {
        const own = await fixture.fresh();
        const store = own.open({ limits: { channelTtlMs: 60_000 } });
        const wall = { text: "Back soon", posted_at: new Date().toISOString(), until: new Date(Date.now() + 60_000).toISOString() };
        await store.sessions.update("claude-101-00000000000000000101", (record) => ({ ...record, wall }));
        await store.sessions.update("claude-202-00000000000000000202", (record) => ({ ...record, wall }));
        await own.makeSessionIdle("claude-101-00000000000000000101", 120_000);
        await store.removeIdleChannels();
        assert.equal((await store.sessions.read("claude-101-00000000000000000101")).wall, null, "the idle session is gone");
        assert.deepEqual((await store.sessions.read("claude-202-00000000000000000202")).wall, wall);
      });

      test("a waiter on a removed channel is woken, and the channel starts again from seq 1", async () => {
        const store = fixture.open({ fallbackWakeMs: 60_000 });
        await store.append("removed", "ui", "e");
        const subscription = store.watchQueue("removed", "ui");
        try {
          await store.remove("removed");
          assert.equal(await subscription.next(10_000), "changed");
        } finally {
          subscription.close();
        }
        assert.equal((await store.append("removed", "ui", "e")).seq, 1);
      });
    });
  });
}
