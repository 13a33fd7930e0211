/**
 * Many real processes on one queue, for each store: 8 writers append 200 messages each
 * while this process reads, first with a cursor and then with read-and-clear. Every
 * message must arrive exactly once (after de-duplication by seq for cursor reads), in
 * each writer's own order, and no seq may be handed out twice.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { QueueMessage } from "../protocol/message.js";
import { type StoreFixture, storeKinds } from "./support/stores.js";

const WRITERS = 8;
const PER_WRITER = 200;
const WRITER = fileURLToPath(new URL("./fixtures/writer.js", import.meta.url));

/** Starts the writers on the store of `fixture`; resolves with the seqs each was given once all have exited 0. */
function runWriters(fixture: StoreFixture, channelId: string): Promise<number[][]> {
  return Promise.all(
    Array.from({ length: WRITERS }, (_, index) => {
      const child = spawn(process.execPath, [WRITER, channelId, `w${index}`, String(PER_WRITER)], {
        env: { ...process.env, ...fixture.env },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      // Settles on every path: a reader loop waits for it, and a promise that never settled
      // would keep this file's process polling for ever.
      return new Promise<number[]>((resolve, reject) =>
        child.on("close", (code) => {
          if (code !== 0) return reject(new Error(`writer ${index} exited ${code}`));
          try {
            resolve(JSON.parse(out) as number[]);
          } catch {
            reject(new Error(`writer ${index} printed no seqs: ${JSON.stringify(out)}`));
          }
        }),
      );
    }),
  );
}

/** Checks that `received` holds each writer's messages exactly once, in its order, and matches the seqs writers were given. */
function assertExactlyOnce(received: QueueMessage[], writerSeqs: number[][]): void {
  const seqs = received.map((message) => message.seq);
  assert.equal(new Set(seqs).size, seqs.length, "no seq twice");
  assert.equal(received.length, WRITERS * PER_WRITER, "nothing lost");
  const allGiven = writerSeqs.flat();
  assert.equal(new Set(allGiven).size, allGiven.length, "no seq handed out twice");
  assert.deepEqual(
    [...seqs].sort((a, b) => a - b),
    [...allGiven].sort((a, b) => a - b),
  );
  const byWriter = new Map<string, number[]>();
  for (const { data } of received) {
    const { writer, n } = data as { writer: string; n: number };
    byWriter.set(writer, [...(byWriter.get(writer) ?? []), n]);
  }
  assert.equal(byWriter.size, WRITERS);
  const inOrder = Array.from({ length: PER_WRITER }, (_, i) => i + 1);
  for (const [writer, ns] of byWriter) assert.deepEqual(ns, inOrder, `${writer}'s own order is kept`);
}

for (const kind of storeKinds()) {
  describe(`${kind.name} store`, { skip: kind.skip }, () => {
    let fixture: StoreFixture;
    before(async () => (fixture = await kind.start()));
    after(() => fixture.stop());

    test(`${WRITERS} writer processes x ${PER_WRITER} messages, read with a cursor: each arrives exactly once`, { timeout: 120_000 }, async () => {
      const store = fixture.open();
      const writers = runWriters(fixture, "mp-cursor");
      let finished = false;
      void writers.then(
        () => (finished = true),
        () => (finished = true),
      );
      const seen = new Map<number, QueueMessage>();
      let cursor = 0;
      let duplicates = 0;
      // Read until the writers are done and a final poll finds nothing.
      for (;;) {
        const done = finished;
        const result = await store.poll("mp-cursor", "agent", { after: cursor, waitMs: 200 });
        for (const message of result.messages) {
          if (seen.has(message.seq)) duplicates += 1;
          else seen.set(message.seq, message);
        }
        cursor = result.cursor;
        if (done && result.messages.length === 0 && result.pending === 0) break;
      }
      const received = [...seen.values()].sort((a, b) => a.seq - b.seq);
      assertExactlyOnce(received, await writers);
      assert.equal(duplicates, 0, "an advancing cursor never sees a message twice");
    });

    test(`${WRITERS} writer processes x ${PER_WRITER} messages, read-and-clear: exactly once, no duplicates`, { timeout: 120_000 }, async () => {
      const store = fixture.open();
      const writers = runWriters(fixture, "mp-clear");
      let finished = false;
      void writers.then(
        () => (finished = true),
        () => (finished = true),
      );
      const received: QueueMessage[] = [];
      for (;;) {
        const done = finished;
        const result = await store.poll("mp-clear", "agent", { waitMs: 200 });
        received.push(...result.messages);
        if (done && result.messages.length === 0 && result.pending === 0) break;
      }
      assertExactlyOnce(received, await writers);
    });
  });
}
