/**
 * Seqs that must never repeat or leave the range callers can send back, through real
 * servers (one for the agent, one for the app, sharing a data directory): a hostile
 * cursor far above the last seq, and a queue file put back from an older copy.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { queueFile } from "../core/paths.js";
import type { QueueMessage } from "../protocol/message.js";
import { stderrOf, structured, startServerPair } from "./support/helpers.js";

let dataDir: string;
let agent: Client;
let app: Client;
let close: () => Promise<void>;
// Two separate server processes, as hosts run them (the model and the app get separate sessions).
before(async () => ({ dataDir, agent, app, close } = await startServerPair()));
after(() => close());

type Poll = { messages: QueueMessage[]; cursor: number };

async function send(channel: string, data: Record<string, unknown>): Promise<number> {
  return structured<{ seq: number }>(await agent.callTool({ name: "notify_ui", arguments: { channel_id: channel, event: "answer", data } })).seq;
}

async function poll(channel: string, after: number): Promise<Poll> {
  return structured<Poll>(await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: channel, after } }));
}

describe("a cursor above the last seq handed out", () => {
  test("moves nothing: it acknowledges nothing, gets the queue from its start, and the app's own cursor goes on working", async () => {
    const channel = "hostile-cursor";
    assert.equal(await send(channel, { n: 1 }), 1);
    const hostile = await poll(channel, 2 ** 50);
    assert.deepEqual(
      hostile.messages.map((m) => m.data),
      [{ n: 1 }],
      "the queue from its start",
    );
    assert.equal(hostile.cursor, 1, "the cursor to go on with is the last seq returned, below the one given");
    assert.equal(await send(channel, { n: 2 }), 2, "the next seq is the next one, not one past the hostile cursor");
    const mine = await poll(channel, 0);
    assert.deepEqual(
      mine.messages.map((m) => m.data),
      [{ n: 1 }, { n: 2 }],
      "nothing was deleted",
    );
    assert.deepEqual((await poll(channel, mine.cursor)).messages, []);
    const emptied = await poll(channel, 2 ** 50);
    assert.deepEqual([emptied.messages, emptied.cursor], [[], 2], "on an empty queue: nothing, and the last seq as cursor");
  });
});

describe("a queue file put back from an older copy", () => {
  test("is caught against the channel's seq mark: new messages go on above every seq handed out, and the app's next poll gets them", async () => {
    const channel = "restored";
    for (let n = 1; n <= 3; n++) await send(channel, { n });
    const backup = join(dataDir, "ui.json.backup");
    await copyFile(queueFile(dataDir, channel, "ui"), backup);
    let cursor = (await poll(channel, 0)).cursor;
    for (let n = 4; n <= 5; n++) await send(channel, { n });
    const read = await poll(channel, cursor);
    assert.deepEqual(
      read.messages.map((m) => m.seq),
      [4, 5],
    );
    cursor = read.cursor;
    await poll(channel, cursor); // acknowledges 4 and 5: the queue is empty

    await copyFile(backup, queueFile(dataDir, channel, "ui")); // a restored backup, or a sync tool
    assert.equal(await send(channel, { n: "new" }), 6, "seq 6, not 4 again");
    const next = await poll(channel, cursor);
    assert.deepEqual(
      next.messages.map((m) => m.data),
      [{ n: "new" }],
      "the app's next poll with its cursor gets the new message",
    );
    assert.match(stderrOf(agent), /went back to seq 3 although seq 5 was handed out .*new ones go on from seq 6/);
  });

  test("when the app polls first, its cursor is kept and the old copy's messages are not delivered again", async () => {
    const channel = "restored-poll-first";
    for (let n = 1; n <= 2; n++) await send(channel, { n });
    const backup = join(dataDir, "ui.json.backup-2");
    await copyFile(queueFile(dataDir, channel, "ui"), backup);
    const read = await poll(channel, 0);
    await send(channel, { n: 3 });
    const cursor = (await poll(channel, read.cursor)).cursor;
    assert.equal(cursor, 3);
    await copyFile(backup, queueFile(dataDir, channel, "ui"));
    assert.deepEqual((await poll(channel, cursor)).messages, [], "nothing old comes again, and nothing was lost");
    assert.equal(await send(channel, { n: 4 }), 4);
    assert.deepEqual(
      (await poll(channel, cursor)).messages.map((m) => m.data),
      [{ n: 4 }],
    );
  });
});
