/**
 * The MCP server over stdio, driven by the SDK's own Client spawning the built server:
 * the tool list, state shared across separate server processes, errors, long-poll.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { SESSION_KEY_PATTERN } from "../core/ids.js";
import { queueFile } from "../core/paths.js";
import { THREADS_STATE } from "../server/reader/reader-state.js";
import { FileStore } from "../store/file/file-store.js";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, structured, startServerPair } from "./support/helpers.js";
import { spawnFixture } from "./support/fixture-process.js";

interface PollResult {
  messages: { seq: number; event: string; data: unknown; ts: string }[];
  cursor: number;
  pending: number;
}

let dataDir: string;
let agent: Client;
let app: Client;
let close: () => Promise<void>;
// Two separate server processes, as hosts run them (the model and the app get separate sessions).
before(async () => ({ dataDir, agent, app, close } = await startServerPair()));
after(() => close());

describe("tools/list", () => {
  test("shows the four channel tools, the app's two marked app-only", async () => {
    const { tools } = await agent.listTools();
    const visibility = Object.fromEntries(
      tools.map((tool) => [tool.name, (tool._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility ?? ["model", "app"]]),
    );
    assert.deepEqual(visibility.notify_ui, ["model", "app"]);
    assert.deepEqual(visibility.poll_agent_messages, ["model", "app"]);
    assert.deepEqual(visibility.poll_ui_messages, ["app"]);
    assert.deepEqual(visibility.notify_agent, ["app"]);
    for (const tool of tools) {
      assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
      assert.ok((tool.description ?? "").length < 300, `${tool.name}'s description is short`);
    }
  });

  test("the server sends instructions that name the loop", () => {
    const instructions = agent.getInstructions() ?? "";
    assert.match(
      instructions,
      /`node \S+main\.js watch <channel_id> --home \S+`/,
      "the exact watcher command of this installation, with its data directory",
    );
    assert.match(instructions, /poll_agent_messages/);
    assert.ok(instructions.length < 2048, `instructions are ${instructions.length} characters`);
  });
});

describe("notify_ui on a channel no app opened", () => {
  test("says so, in the text and in structuredContent; on an opened channel it says nothing of the kind", async () => {
    const unopened = structured<{ seq: number; note?: string }>(
      await agent.callTool({
        name: "notify_ui",
        arguments: { channel_id: "ch-nobody-opened", event: "answer", data: { thread_id: "t", text: "hi" } },
      }),
    );
    assert.equal(unopened.seq, 1);
    assert.match(unopened.note ?? "", /^No app has channel ch-nobody-opened open in this store: nothing shows this message/);
    const opened = structured<{ channel_id: string }>(await agent.callTool({ name: "open_reader", arguments: { markdown: "# Open\n\nHere." } }));
    const sent = await agent.callTool({ name: "notify_ui", arguments: { channel_id: opened.channel_id, event: "hello", data: {} } });
    assert.equal((sent.structuredContent as { note?: string }).note, undefined);
    assert.doesNotMatch(JSON.stringify(sent.content), /No app has channel/);
  });
});

describe("notify_ui's steps after the send", () => {
  test("an answer its thread cannot keep, and an ack that cannot clear, are sent all the same and say why", { timeout: 60_000 }, async () => {
    const staleMs = 300;
    const model = await connectServer(dataDir, { BACKCHANNEL_LOCK_STALE_MS: String(staleMs) });
    const { channel_id } = structured<{ channel_id: string }>(await model.callTool({ name: "open_reader", arguments: { text: "One two." } }));
    const passage = { channel_id, thread_id: "t-1", quote: "two", paragraph: "One two.", anchor: { block: 0, start: 4, end: 7 } };
    await app.callTool({ name: "reader_record", arguments: { ...passage, message: { id: "q-1", role: "user", text: "Why two?" } } });
    // The faults, made for real: the thread record is not one, and a live writer holds the app's queue past the lock's patience.
    const store = new FileStore({ dataDir });
    await store.updateState(channel_id, THREADS_STATE, () => ({ threads: "not a list" }));
    await store.append(channel_id, "agent", "ask", { thread_id: "t-1" });
    const holder = spawnFixture("lock-holder", [queueFile(dataDir, channel_id, "agent"), String(staleMs), "30000"]);
    try {
      await holder.waitFor("locked");
      const data = { thread_id: "t-1", text: "Because." };
      const sent = await model.callTool({ name: "notify_ui", arguments: { channel_id, event: "answer", data, ack: 1 } });
      assert.equal(sent.isError, undefined);
      const text = (sent.content as { text: string }[])[0]!.text;
      assert.match(
        text,
        /^Sent answer as seq 1 \(1 waiting\)\. The reader's thread did not keep it: the reader's reader-threads of channel \S+ is damaged/,
      );
      assert.match(text, / The app's messages were not cleared: .*locked/);
      const read = structured<PollResult>(await app.callTool({ name: "poll_ui_messages", arguments: { channel_id } }));
      assert.deepEqual(
        read.messages.map((message) => message.data),
        [data],
      );
    } finally {
      holder.child.kill();
      await Promise.all([holder.exited, model.close()]);
    }
  });
});

describe("across server processes", () => {
  test("notify_ui in one process is received by poll_ui_messages in another", async () => {
    const sent = structured<{ seq: number; pending: number }>(
      await agent.callTool({ name: "notify_ui", arguments: { channel_id: "cross", event: "answer", data: { thread_id: "t1", text: "hi" } } }),
    );
    assert.deepEqual([sent.seq, sent.pending], [1, 1]);
    const received = structured<PollResult>(await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "cross", after: 0 } }));
    assert.deepEqual(
      received.messages.map((m) => [m.seq, m.event, m.data]),
      [[1, "answer", { thread_id: "t1", text: "hi" }]],
    );
    assert.equal(received.cursor, 1);
  });

  test("notify_agent in one process is read and cleared by poll_agent_messages in another, with the data in the text", async () => {
    await app.callTool({ name: "notify_agent", arguments: { channel_id: "cross", event: "ask", data: { question: "why?" } } });
    const result = await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "cross" } });
    const polled = structured<PollResult>(result);
    assert.deepEqual(
      polled.messages.map((m) => m.data),
      [{ question: "why?" }],
    );
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    assert.match(text, /1 message/);
    assert.match(text, /why\?/, "hosts that show only text still get the message");
    assert.deepEqual(structured<PollResult>(await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "cross" } })).messages, []);
  });
});

describe("bad arguments give isError results, never a crash", () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["notify_ui", { channel_id: "../x", event: "answer" }, /channel id/],
    ["notify_ui", { channel_id: "a/b", event: "answer" }, /channel id/],
    ["notify_ui", { channel_id: "", event: "answer" }, /channel id/],
    ["notify_ui", { channel_id: "x".repeat(65), event: "answer" }, /channel id/],
    ["notify_ui", { channel_id: "a\u0000b", event: "answer" }, /channel id/],
    ["notify_ui", { channel_id: "ok", event: "not an event!" }, /event name/],
    ["notify_ui", { channel_id: "ok" }, /event/],
    ["notify_agent", { channel_id: 5, event: "ask" }, /channel_id/],
    ["poll_agent_messages", { channel_id: "ok", wait_ms: "soon" }, /wait_ms/],
    ["poll_agent_messages", { channel_id: "ok", wait_ms: 300_001 }, /wait_ms/],
    ["poll_ui_messages", { channel_id: "ok", wait_ms: 30_001 }, /wait_ms/],
    ["poll_ui_messages", { channel_id: "ok", after: -1 }, /after/],
    ["notify_ui", { channel_id: "ok", event: "e", data: { text: "x".repeat(70_000) } }, /message too large.*send less/],
  ];
  for (const [name, args, message] of cases) {
    test(`${name} ${JSON.stringify(args).slice(0, 60)}`, async () => {
      const result = await agent.callTool({ name, arguments: args });
      assert.equal(result.isError, true);
      const text = (result.content as { text: string }[])[0]!.text;
      assert.match(text, message);
      assert.doesNotMatch(text, /\n\s+at /, "no stack trace");
    });
  }

  test("a caller error carries its stable code in structuredContent, beside the same text", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["notify_ui", { channel_id: "ok", event: "e", data: { text: "x".repeat(70_000) } }, "MESSAGE_TOO_LARGE"],
      ["post_wall", { text: "both", clear: true }, "INVALID_ARGUMENTS"],
      ["read_recipe", { name: "no-such-recipe" }, "UNKNOWN_RECIPE"],
    ];
    for (const [name, args, code] of cases) {
      const result = await agent.callTool({ name, arguments: args });
      assert.equal(result.isError, true, name);
      const text = (result.content as { text: string }[])[0]!.text;
      assert.deepEqual(result.structuredContent, { error: { code, message: text } }, `${name} ${JSON.stringify(args).slice(0, 60)}`);
    }
  });

  test("the server still answers after all of them, and created nothing outside its channels, sessions and space reserve", async () => {
    const sent = structured<{ seq: number }>(await agent.callTool({ name: "notify_ui", arguments: { channel_id: "after-errors", event: "e" } }));
    assert.equal(sent.seq, 1);
    assert.deepEqual((await readdir(dataDir)).sort(), ["channels", "sessions", "space.reserve"]);
    for (const name of await readdir(join(dataDir, "sessions"))) assert.match(name.replace(/\.json$/, ""), SESSION_KEY_PATTERN);
  });
});

test("long-poll: poll_ui_messages waiting 10 s is woken by notify_ui in another process, not by its fallback timer", async () => {
  const waiting = app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "longpoll", after: 0, wait_ms: 10_000 } });
  // Let the wait begin: a poll of the empty queue through the same server proves the
  // waiting call was read before ours (stdio requests are handled in order).
  await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: "longpoll-other", after: 0 } });
  const sentAt = performance.now();
  await agent.callTool({ name: "notify_ui", arguments: { channel_id: "longpoll", event: "answer", data: { text: "now" } } });
  const sentReturned = performance.now();
  const result = structured<PollResult>(await waiting);
  const latency = performance.now() - sentReturned;
  assert.deepEqual(
    result.messages.map((m) => m.data),
    [{ text: "now" }],
  );
  // A loose net: the file store's fallback re-read comes 5 s into the wait, so a wake-up missed shows as seconds; latency figures are in bench/.
  assert.ok(latency < 2500, `returned ${latency.toFixed(1)} ms after notify_ui returned (send took ${(sentReturned - sentAt).toFixed(1)} ms)`);
});

describe("progress while a poll waits", () => {
  test("a call with a progress token gets notifications/progress while it waits", async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    let waitBegan!: () => void;
    const began = new Promise<void>((resolve) => (waitBegan = resolve));
    const waiting = agent.callTool(
      { name: "poll_agent_messages", arguments: { channel_id: "progress", wait_ms: 10_000 } },
      {
        onprogress: (update) => {
          progress.push(update);
          waitBegan();
        },
      },
    );
    // The first notification is sent when the wait begins: answer once it has arrived.
    await began;
    await app.callTool({ name: "notify_agent", arguments: { channel_id: "progress", event: "ask", data: { question: "q" } } });
    assert.equal(structured<PollResult>(await waiting).messages.length, 1);
    assert.equal(progress[0]!.total, 10_000);
    assert.match(progress[0]!.message ?? "", /waiting for the app on progress/);
  });

  test("a call without a progress token gets none", async () => {
    const client = await connectServer(dataDir);
    try {
      let notifications = 0;
      client.setNotificationHandler("notifications/progress", () => {
        notifications += 1;
      });
      const result = await client.callTool({ name: "poll_agent_messages", arguments: { channel_id: "no-progress", wait_ms: 300 } });
      assert.deepEqual(structured<PollResult>(result).messages, []);
      assert.equal(notifications, 0);
    } finally {
      await client.close();
    }
  });
});
