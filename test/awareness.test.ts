/**
 * Push and awareness through real server processes and real SDK clients: the tool
 * description with `tools/list_changed`, Claude Code channel pushes across two server
 * processes, the wall, and elicitation.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { z } from "zod";
import { createServer } from "../server/server.js";
import { FileStore } from "../store/file/file-store.js";
import { connectServer, standInHost, structured, tempDataDir } from "./support/helpers.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";
import { ObservedStore } from "./support/observed-store.js";

/** Every server of a test plays the same Claude Code session. */
const SESSION = standInHost().env;

interface Wall {
  text: string;
  posted_at: string;
  until: string;
}
interface UiPoll {
  messages: { seq: number; event: string }[];
  wall: Wall | null;
}

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: dataDir, cleanup } = await tempDataDir()));
after(() => cleanup());

/** A counter of one notification method that can be awaited. */
function counter() {
  let count = 0;
  const waiters: { target: number; wake: () => void }[] = [];
  return {
    get count() {
      return count;
    },
    hit() {
      count += 1;
      for (const waiter of waiters.filter((w) => count >= w.target)) waiter.wake();
    },
    /** Resolves once the count reaches `target`. */
    reach(target: number): Promise<void> {
      if (count >= target) return Promise.resolve();
      return new Promise((wake) => waiters.push({ target, wake }));
    },
  };
}

async function openReader(client: Client, markdown = "# A\n\nIt is a truth universally acknowledged."): Promise<string> {
  return structured<{ channel_id: string }>(await client.callTool({ name: "open_reader", arguments: { markdown } })).channel_id;
}

function ask(app: Client, channelId: string, question: string) {
  const data = { thread_id: "t1", quote: "truth", paragraph: "It is a truth universally acknowledged.", question, history: [] };
  return app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data } });
}

async function pollAgentDescription(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  return tools.find((tool) => tool.name === "poll_agent_messages")!.description!;
}

/** Resolves once `client`'s poll_agent_messages description matches `pattern`, re-reading it after each list_changed. */
async function untilDescription(client: Client, changes: ReturnType<typeof counter>, pattern: RegExp): Promise<void> {
  for (let seen = changes.count; !pattern.test(await pollAgentDescription(client)); seen += 1) await changes.reach(seen + 1);
}

for (const era of ["2025-11-25", "2026-07-28"] as const)
  describe(`tool-description notify (${era})`, () => {
    let agent: Client;
    let app: Client;
    const changes = counter();
    before(async () => {
      [agent, app] = await Promise.all([connectServer(dataDir, SESSION, { modern: era === "2026-07-28" }), connectServer(dataDir, SESSION)]);
      agent.setNotificationHandler("notifications/tools/list_changed", () => changes.hit());
      // 2026-07-28 delivers change notifications only on a subscriptions/listen stream the client opens.
      if (era === "2026-07-28") await agent.listen({ toolsListChanged: true });
    });
    after(() => Promise.all([agent.close(), app.close()]));

    test("one list_changed per change of what waits, none when nothing changed", async () => {
      const channelId = await openReader(agent);
      assert.doesNotMatch(await pollAgentDescription(agent), /Waiting now/);

      await ask(app, channelId, "What does universally mean here?");
      await changes.reach(1);
      assert.match(await pollAgentDescription(agent), /Waiting now: 1 \(ask "What does universally mean here\?" on ch-/);

      await ask(app, channelId, "And acknowledged?");
      await changes.reach(2);
      assert.match(await pollAgentDescription(agent), /Waiting now: 2 \(ask "What does universally mean here\?"/);

      // Changes that do not change what waits for the agent: a message to the app, a
      // `ready` (which never rings), the app's own state. None may notify; the next real
      // change is the barrier that shows it: exactly one more notification, not two.
      await agent.callTool({ name: "notify_ui", arguments: { channel_id: channelId, event: "hello" } });
      await app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ready" } });
      await app.callTool({ name: "poll_ui_messages", arguments: { channel_id: channelId } });

      // From inside a tool call: the poll takes everything, and the description drops it.
      const polled = structured<{ messages: unknown[] }>(await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId } }));
      assert.equal(polled.messages.length, 3);
      await changes.reach(3);
      assert.doesNotMatch(await pollAgentDescription(agent), /Waiting now/);
      assert.equal(changes.count, 3);

      await ask(app, channelId, "One more?");
      await changes.reach(4);
      assert.equal(changes.count, 4, "the no-op changes above sent no notification");
    });

    test("poll_agent_messages is always loaded in Claude Code, so its description is never stale", async () => {
      const { tools } = await agent.listTools();
      assert.deepEqual(tools.find((tool) => tool.name === "poll_agent_messages")!._meta?.["anthropic/alwaysLoad"], true);
    });
  });

test("a reader stays a reader in its session, with the title it was opened with, when another process of the session polls it", async () => {
  const session = standInHost();
  const [opener, poller] = await Promise.all([connectServer(dataDir, session.env), connectServer(dataDir, session.env)]);
  try {
    const channelId = await openReader(opener);
    await poller.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId } });
    const record = await new FileStore({ dataDir }).sessions.read(session.key);
    assert.deepEqual(record.channels, [{ id: channelId, app: "reader", title: "A" }]);
  } finally {
    await Promise.all([opener.close(), poller.close()]);
  }
});

describe("Claude Code channel push", () => {
  const pushSchema = { params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }) };
  type Push = z.infer<typeof pushSchema.params>;

  async function pushClient(pushes: Push[], all: ReturnType<typeof counter>, env: Record<string, string> = { BACKCHANNEL_CLAUDE_CHANNEL: "1" }) {
    const client = await connectServer(dataDir, { ...SESSION, ...env });
    client.setNotificationHandler("notifications/claude/channel", pushSchema, (params) => {
      pushes.push(params);
      all.hit();
    });
    return client;
  }

  test("declared only when enabled", async () => {
    const plain = await connectServer(dataDir, SESSION);
    const enabled = await pushClient([], counter());
    try {
      assert.equal(plain.getServerCapabilities()?.experimental?.["claude/channel"], undefined);
      assert.deepEqual(enabled.getServerCapabilities()?.experimental?.["claude/channel"], {});
    } finally {
      await Promise.all([plain.close(), enabled.close()]);
    }
  });

  test("two server processes on one channel push each message exactly once; the other takes over when the owner ends", async () => {
    const all = counter();
    const fromOwner: Push[] = [];
    const fromOther: Push[] = [];
    const owner = await pushClient(fromOwner, all);
    const other = await pushClient(fromOther, all);
    const app = await connectServer(dataDir, SESSION);
    const otherSaw = counter();
    other.setNotificationHandler("notifications/tools/list_changed", () => otherSaw.hit());
    try {
      const channelId = await openReader(owner);
      // The other process watches the channel too: it polled it (with a cursor, taking nothing).
      await other.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId, after: 0 } });

      const questions = ["First?", "Second?", "Third?", "Fourth?", "Fifth?"];
      for (const [index, question] of questions.entries()) {
        await ask(app, channelId, question);
        await all.reach(index + 1);
      }
      // Barrier: the other process has seen the last message too (its description says
      // so), so a duplicate from it would have been sent by now.
      await untilDescription(other, otherSaw, /Waiting now: 5 /);
      assert.equal(all.count, questions.length);
      assert.equal(fromOther.length, 0, "the owner pushes, the other does not");
      assert.deepEqual(
        fromOwner.map((push) => push.meta.seq),
        ["1", "2", "3", "4", "5"],
      );
      for (const push of fromOwner) {
        assert.equal(push.meta.channel_id, channelId);
        assert.equal(push.meta.event, "ask");
        assert.match(push.content, /poll_agent_messages/);
      }
      assert.match(fromOwner[0]!.content, /"First\?"/);

      // The owner's process ends; the next question is pushed by the other, once.
      await owner.close();
      await ask(app, channelId, "After the owner left?");
      await all.reach(questions.length + 1);
      assert.equal(fromOther.length, 1);
      assert.equal(fromOther[0]!.meta.seq, "6");
      await app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ready" } });
      await ask(app, channelId, "And a seventh?");
      await all.reach(questions.length + 2);
      assert.deepEqual(
        fromOther.map((push) => push.meta.seq),
        ["6", "8"],
        "ready (seq 7) is not pushed",
      );
    } finally {
      await Promise.all([owner.close(), other.close(), app.close()]);
    }
  });
});

describe("wall", () => {
  let agent: Client;
  let app: Client;
  /** The reader's host session, another than the agent's. */
  const appSession = standInHost();
  before(async () => {
    [agent, app] = await Promise.all([connectServer(dataDir, standInHost().env), connectServer(dataDir, appSession.env)]);
  });
  after(async () => {
    await agent.callTool({ name: "post_wall", arguments: { clear: true } });
    await Promise.all([agent.close(), app.close()]);
  });

  /** Polls as the reader does. */
  const pollUi = async (channelId: string, wait_ms = 0, reader: Client = app) =>
    structured<UiPoll>(await reader.callTool({ name: "poll_ui_messages", arguments: { channel_id: channelId, after: 0, wait_ms } }));

  /**
   * A reader's server in this process, on a store that says when a poll starts to wait
   * (the app's polls send no progress, so nothing else shows it).
   */
  async function observedReader(): Promise<{ client: Client; store: ObservedStore }> {
    const store = new ObservedStore({ dataDir });
    const server = createServer({ store, sessionKey: appSession.key });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "observed-reader", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await client.connect(clientSide);
    return { client, store };
  }

  test("a wall posted while a reader's poll waits ends the wait and shows; a reader opened later sees it; clear takes it down", async () => {
    const channelId = await openReader(agent);
    assert.equal((await pollUi(channelId)).wall, null);

    const reader = await observedReader();
    const started = Date.now();
    const wait = reader.store.watch(channelId);
    const waiting = pollUi(channelId, 20_000, reader.client);
    await wait.began;
    // The app's process belongs to another session (appSession): the wall is the
    // one of the session that opened the channel.
    const posted = structured<{ until: string }>(
      await agent.callTool({ name: "post_wall", arguments: { text: "Reading chapter 3", duration_s: 600 } }),
    );
    const result = await waiting;
    await reader.client.close();
    assert.ok(Date.now() - started < 15_000, "the wall ended the poll's wait");
    assert.deepEqual(result.messages, []);
    assert.equal(result.wall?.text, "Reading chapter 3");
    assert.equal(result.wall?.until, posted.until);
    const minutes = (Date.parse(result.wall!.until) - Date.parse(result.wall!.posted_at)) / 60_000;
    assert.equal(minutes, 10);

    const later = await openReader(agent, "# B\n\nAnother document.");
    assert.equal((await pollUi(later)).wall?.text, "Reading chapter 3", "not queued: a reader opened later still sees it");

    const cleared = await agent.callTool({ name: "post_wall", arguments: { clear: true } });
    assert.match(JSON.stringify(cleared.content), /Took the wall down/);
    assert.equal((await pollUi(channelId)).wall, null);
  });

  test("a wall lasts an hour by default and expires on its own", async () => {
    const channelId = await openReader(agent);
    const hour = structured<{ until: string }>(await agent.callTool({ name: "post_wall", arguments: { text: "Back soon" } }));
    const wall = (await pollUi(channelId)).wall!;
    assert.equal(wall.until, hour.until);
    assert.equal(Date.parse(wall.until) - Date.parse(wall.posted_at), 3_600_000);

    const short = structured<{ until: string }>(await agent.callTool({ name: "post_wall", arguments: { text: "One second", duration_s: 1 } }));
    assert.equal((await pollUi(channelId)).wall?.text, "One second");
    // A poll waiting through the expiry ends with the wall gone: no event marks an
    // expiry, so the server re-reads the wall on its recheck timer (5 s).
    const result = await pollUi(channelId, 20_000);
    assert.ok(Date.now() >= Date.parse(short.until));
    assert.equal(result.wall, null);
  });

  test("a wall out of bounds is refused with what to change", async () => {
    const tooLong = await agent.callTool({ name: "post_wall", arguments: { text: "Back soon", duration_s: 3 * 86_400 + 1 } });
    assert.equal(tooLong.isError, true);
    assert.match(JSON.stringify(tooLong.content), /from 1 to 259200 \(3 days\)/);
    const both = await agent.callTool({ name: "post_wall", arguments: { text: "x", clear: true } });
    assert.match(JSON.stringify(both.content), /either text or clear/);
    const empty = await agent.callTool({ name: "post_wall", arguments: { text: "   " } });
    assert.match(JSON.stringify(empty.content), /empty/);
    const long = await agent.callTool({ name: "post_wall", arguments: { text: "x".repeat(201) } });
    assert.match(JSON.stringify(long.content), /201 characters; keep it to 200/);
  });
});

for (const era of ["2025-11-25", "2026-07-28"] as const) {
  // 2025-11-25: the server sends elicitation/create within the call. 2026-07-28: the tool
  // answers input_required, and the SDK client asks (through the same handler) and calls again.
  describe(`elicitation (${era}): open_reader without a document asks the user`, () => {
    type Answer = { action: "accept"; content: Record<string, string> } | { action: "decline" } | { action: "cancel" };
    const modern = era === "2026-07-28";

    async function userAnswering(answer: Answer) {
      const asked: { message: string; properties: string[] }[] = [];
      const client = await connectServer(dataDir, SESSION, {
        modern,
        capabilities: { elicitation: { form: {} }, extensions: APPS_HOST_EXTENSIONS },
        prepare: (c) =>
          c.setRequestHandler("elicitation/create", (request) => {
            const params = request.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
            asked.push({ message: params.message, properties: Object.keys(params.requestedSchema.properties) });
            return answer;
          }),
      });
      assert.equal(client.getNegotiatedProtocolVersion(), era);
      return { client, asked };
    }

    test("accept with pasted text opens it", async () => {
      const { client, asked } = await userAnswering({ action: "accept", content: { text: "# Pasted\n\nThree little words." } });
      try {
        const result = structured<{ title: string; words: number }>(await client.callTool({ name: "open_reader", arguments: {} }));
        assert.equal(asked.length, 1);
        assert.match(asked[0]!.message, /What should the reader show/);
        assert.deepEqual(asked[0]!.properties.sort(), ["path", "text"]);
        assert.equal(result.title, "Pasted");
      } finally {
        await client.close();
      }
    });

    test("accept with a file path opens the file", async () => {
      const file = join(dataDir, "chosen.md");
      await writeFile(file, "# Chosen file\n\nHello there.");
      const { client } = await userAnswering({ action: "accept", content: { path: file, text: "" } });
      try {
        assert.equal(structured<{ title: string }>(await client.callTool({ name: "open_reader", arguments: {} })).title, "Chosen file");
      } finally {
        await client.close();
      }
    });

    for (const [action, expected] of [
      ["decline", /declined.*do not ask again/],
      ["cancel", /did not answer.*non-interactive run answers cancel.*ask in the chat/],
    ] as const) {
      test(`${action} is an error that says what to do next`, async () => {
        const { client, asked } = await userAnswering({ action });
        try {
          const result = await client.callTool({ name: "open_reader", arguments: {} });
          assert.equal(asked.length, 1);
          assert.equal(result.isError, true);
          assert.match(JSON.stringify(result.content), expected);
        } finally {
          await client.close();
        }
      });
    }

    test("a client that cannot ask gets told to pass the document", async () => {
      const client = await connectServer(dataDir, SESSION, { modern });
      try {
        const result = await client.callTool({ name: "open_reader", arguments: {} });
        assert.equal(result.isError, true);
        assert.match(JSON.stringify(result.content), /cannot ask the user/);
      } finally {
        await client.close();
      }
    });
  });
}
