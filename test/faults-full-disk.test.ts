/**
 * A nearly full and a full disk (a real tmpfs) under real server processes: a write
 * that only partly fits is refused whole and leaves the old file whole, and a full disk
 * never locks the reader out of what waits for it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import type { Client } from "@modelcontextprotocol/client";
import { channelDir, queueFile, spaceReserveFile } from "../core/paths.js";
import { FileQueueReader } from "../store/file/queue-reader.js";
import { connectServer, structured } from "./support/helpers.js";
import { fillDisk, freeDisk, mountTmpfs, tmpfsSkip, unmount } from "./support/tmpfs.js";

interface Poll {
  messages: { seq: number; event: string; data: { n?: number } }[];
  cursor: number;
}

/** The text of a tool's answer. */
function textOf(result: { content?: unknown }): string {
  return (result.content as { type: string; text: string }[])[0]!.text;
}

/** A server on a fresh tmpfs of `size`, given to `run`, then stopped and the tmpfs unmounted. */
async function onTmpfs(size: string, run: (at: string, agent: Client) => Promise<void>): Promise<void> {
  const at = mountTmpfs(size);
  if (!at) return assert.fail("could not mount a tmpfs although running as root");
  const agent = await connectServer(at).catch((error: unknown) => {
    unmount(at);
    throw error;
  });
  try {
    await run(at, agent);
  } finally {
    await agent.close();
    unmount(at);
  }
}

async function notifyUi(agent: Client, channelId: string, data: Record<string, unknown>) {
  return agent.callTool({ name: "notify_ui", arguments: { channel_id: channelId, event: "e", data } });
}

async function pollUi(agent: Client, channelId: string, after?: number) {
  return agent.callTool({ name: "poll_ui_messages", arguments: { channel_id: channelId, ...(after === undefined ? {} : { after }) } });
}

/** The seqs in a queue file as a reader without the lock sees them. */
async function seqsOnDisk(at: string, channelId: string): Promise<number[]> {
  return (await new FileQueueReader(at).peek(channelId, "ui")).map((message) => message.seq);
}

/** Where the line of message `seq` starts in the log at `path`. */
async function seqLineStart(path: string, seq: number): Promise<number> {
  const text = await readFile(path, "utf8");
  return Buffer.byteLength(text.slice(0, text.indexOf(`{"seq":${seq},`)));
}

async function tempFiles(at: string, channelId: string): Promise<string[]> {
  return (await readdir(channelDir(at, channelId))).filter((name) => name.endsWith(".tmp"));
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("a nearly full disk (a real tmpfs)", { skip: tmpfsSkip() }, () => {
  test("a compaction with room for part of the queue loses none of the unread messages", { timeout: 60_000 }, async (t) => {
    await onTmpfs("8m", async (at, agent) => {
      const channelId = "compact-full";
      for (let n = 1; n <= 95; n++) assert.ok(!(await notifyUi(agent, channelId, { n, text: "x".repeat(30_000) })).isError);
      await fillDisk(at, 600 * 1024);
      // Acknowledging 50 of 95 makes the dead records outweigh the live ones: the log is compacted, or would be.
      const answer = await pollUi(agent, channelId, 50);
      t.diagnostic(`the acknowledging poll: ${answer.isError ? textOf(answer) : "answered"}`);
      assert.ok(!answer.isError, `the poll is answered on a nearly full disk: ${textOf(answer)}`);
      assert.equal(structured<Poll>(answer).messages[0]?.seq, 51);
      await freeDisk(at);
      const kept = await seqsOnDisk(at, channelId);
      t.diagnostic(`${range(51, 95).filter((seq) => !kept.includes(seq)).length} of 45 unread messages lost`);
      assert.deepEqual(kept, range(51, 95), "every unread message is still in the queue, and only those");
      assert.deepEqual(await tempFiles(at, channelId), [], "no temp file left");
    });
  });

  test("open_reader with room for part of the document fails clearly and keeps the old document", { timeout: 60_000 }, async () => {
    await onTmpfs("4m", async (at, agent) => {
      const first = structured<{ channel_id: string }>(
        await agent.callTool({ name: "open_reader", arguments: { title: "First", markdown: "The first document." } }),
      );
      const channelId = first.channel_id;
      await fillDisk(at, 24 * 1024);
      const answer = await agent.callTool({
        name: "open_reader",
        arguments: { channel_id: channelId, title: "Second", markdown: `${"word ".repeat(20_000)}\n` },
      });
      assert.ok(answer.isError, `open_reader is refused: ${textOf(answer)}`);
      assert.match(textOf(answer), /\(ENOSPC\): the disk is full; free some space on the disk holding the data directory, then try again/);
      const state = structured<{ document: { title: string } | null }>(
        await agent.callTool({ name: "reader_state", arguments: { channel_id: channelId } }),
      );
      assert.equal(state.document?.title, "First", "the old document is whole");
      assert.deepEqual(await tempFiles(at, channelId), [], "no temp file left");
    });
  });

  test("an append with room for part of its record is refused whole, and the next one is whole", { timeout: 60_000 }, async () => {
    await onTmpfs("4m", async (at, agent) => {
      const channelId = "torn-append";
      for (let n = 1; n <= 3; n++) assert.ok(!(await notifyUi(agent, channelId, { n })).isError);
      const path = queueFile(at, channelId, "ui");
      const before = (await stat(path)).size;
      await fillDisk(at, 8 * 1024);
      // About 60 KB: the disk takes the first pages of it, then is full.
      const refused = await notifyUi(agent, channelId, { n: 4, text: "y".repeat(60_000) });
      assert.ok(refused.isError, "the torn append is not acknowledged");
      assert.match(textOf(refused), /ENOSPC/);
      assert.equal((await stat(path)).size, before, "the torn record was cut off");
      await freeDisk(at);
      const next = structured<{ seq: number }>(await notifyUi(agent, channelId, { n: 5 }));
      assert.equal(next.seq, 4, "the refused append took no seq");
      const read = structured<Poll>(await pollUi(agent, channelId, 0));
      assert.deepEqual(
        read.messages.map((message) => [message.seq, message.data.n]),
        [
          [1, 1],
          [2, 2],
          [3, 3],
          [4, 5],
        ],
      );
    });
  });
});

describe("a full disk does not lock the reader out (a real tmpfs)", { skip: tmpfsSkip() }, () => {
  test("with no reserve left, a read with a cursor still answers when nothing more fits, and acknowledges once room is back", {
    timeout: 60_000,
  }, async (t) => {
    await onTmpfs("4m", async (at, agent) => {
      const channelId = "full-reader";
      const log = queueFile(at, channelId, "ui");
      for (let n = 1; n <= 9; n++) assert.ok(!(await notifyUi(agent, channelId, { n, text: "z".repeat(2_000) })).isError);
      // The 10th message ends the log on a page boundary, so that its acknowledgement needs a new page
      // (as the lock's record file does, core/fs/lock.ts). Its line is the 9th's with a text of another
      // length, and two more digits (seq and n).
      const before = (await stat(log)).size;
      const ninth = before - (await seqLineStart(log, 9));
      const text = 4096 + (4096 - (before % 4096)) - (ninth - 2_000 + 2);
      assert.ok(!(await notifyUi(agent, channelId, { n: 10, text: "z".repeat(text) })).isError);
      assert.equal((await stat(log)).size % 4096, 0, "the log fills its last page");
      // Without the space reserve (another process used it up): the read must not need one.
      await rm(spaceReserveFile(at));
      await fillDisk(at, 0);
      const refused = await notifyUi(agent, channelId, { n: 11, text: "z".repeat(8_000) });
      assert.ok(refused.isError, "the disk is really full: a writer is refused");

      const read = await pollUi(agent, channelId, 5);
      t.diagnostic(`the poll on a full disk: ${read.isError ? textOf(read) : "answered"}`);
      assert.ok(!read.isError, `the reader is answered on a full disk: ${textOf(read)}`);
      assert.deepEqual(
        structured<Poll>(read).messages.map((message) => message.seq),
        range(6, 10),
      );
      const caughtUp = await pollUi(agent, channelId, 10);
      assert.ok(!caughtUp.isError, textOf(caughtUp));
      assert.deepEqual(structured<Poll>(caughtUp).messages, []);
      assert.deepEqual(await seqsOnDisk(at, channelId), range(1, 10), "nothing was acknowledged, nothing lost");

      await freeDisk(at);
      assert.deepEqual(structured<Poll>(await pollUi(agent, channelId, 10)).messages, []);
      assert.deepEqual(await seqsOnDisk(at, channelId), [], "the acknowledgement landed once there was room");
      assert.equal(structured<{ seq: number }>(await notifyUi(agent, channelId, { n: 11 })).seq, 11, "no seq repeats");
    });
  });

  test("at 0 free pages the app reads everything with its cursor and the agent reads and clears, each read acknowledged", {
    timeout: 60_000,
  }, async (t) => {
    await onTmpfs("4m", async (at, agent) => {
      const channelId = "full-ack";
      for (let n = 1; n <= 68; n++) {
        assert.ok(!(await notifyUi(agent, channelId, { n, text: "z".repeat(2_000) })).isError);
        const asked = await agent.callTool({
          name: "notify_agent",
          arguments: { channel_id: channelId, event: "e", data: { n, text: "a".repeat(2_000) } },
        });
        assert.ok(!asked.isError, textOf(asked));
      }
      await fillDisk(at, 0);
      assert.ok((await notifyUi(agent, channelId, { n: 69, text: "z".repeat(8_000) })).isError, "the disk is really full: a writer is refused");

      // The app's poll: a cursor, each read acknowledging what the one before returned.
      const read: number[] = [];
      for (let after = 0, polls = 0; polls < 100; polls++) {
        const answer = await pollUi(agent, channelId, after);
        assert.ok(!answer.isError, `the app's poll is answered at 0 free pages: ${textOf(answer)}`);
        const { messages, cursor } = structured<Poll>(answer);
        read.push(...messages.map((message) => message.seq));
        if (messages.length === 0) break;
        after = cursor;
      }
      assert.deepEqual(read, range(1, 68), "the app read every message once");
      assert.deepEqual(await seqsOnDisk(at, channelId), [], "every read was acknowledged on the full disk");
      assert.equal((await stat(spaceReserveFile(at))).size, 64 * 1024, "the room the compactions freed went back to the reserve");

      const cleared: number[] = [];
      for (let polls = 0; polls < 100; polls++) {
        const answer = await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId } });
        assert.ok(!answer.isError, `the agent's read-and-clear is answered at 0 free pages: ${textOf(answer)}`);
        const { messages } = structured<Poll>(answer);
        if (messages.length === 0) break;
        cleared.push(...messages.map((message) => message.seq));
      }
      t.diagnostic(`at 0 free pages: the app read ${read.length} of 68, the agent cleared ${cleared.length} of 68`);
      assert.deepEqual(cleared, range(1, 68), "the agent read and cleared every message once");
      assert.deepEqual(
        (await new FileQueueReader(at).peek(channelId, "agent")).map((message) => message.seq),
        [],
      );
      await freeDisk(at);
      assert.equal(structured<{ seq: number }>(await notifyUi(agent, channelId, { n: 69 })).seq, 69, "no seq repeats");
    });
  });

  test("a read-and-clear and a read with a cursor work when the queue cannot be compacted", { timeout: 60_000 }, async () => {
    await onTmpfs("8m", async (at, agent) => {
      const channelId = "no-compaction";
      for (let n = 1; n <= 60; n++) assert.ok(!(await notifyUi(agent, channelId, { n, text: "w".repeat(30_000) })).isError);
      await fillDisk(at, 200 * 1024);
      const drained = await pollUi(agent, channelId);
      assert.ok(!drained.isError, `read-and-clear is answered: ${textOf(drained)}`);
      const batch = structured<Poll>(drained).messages.map((message) => message.seq);
      assert.equal(batch[0], 1);
      const last = batch.at(-1)!;
      assert.deepEqual(await seqsOnDisk(at, channelId), range(last + 1, 60), "what was returned is deleted, nothing else");
      const more = await pollUi(agent, channelId, 55);
      assert.ok(!more.isError, textOf(more));
      assert.deepEqual(
        structured<Poll>(more).messages.map((message) => message.seq),
        range(56, 60),
      );
      assert.deepEqual(await seqsOnDisk(at, channelId), range(56, 60));
    });
  });
});
