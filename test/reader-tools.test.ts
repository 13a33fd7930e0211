/**
 * open_reader and the reader's app-only tools, through real server processes: the
 * document stays out of the model's answer, `path` fails clearly for missing, binary,
 * oversized and non-UTF-8 files, the thread log is idempotent and keeps drafts only while
 * they are current, the reading position is kept until the text changes, and over HTTP `path` is off and foreign origins are refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, request, type Server } from "node:http";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { gunzipSync } from "node:zlib";
import { historyDigest } from "../protocol/history-digest.js";
import { createMcpRequestListener, FileStore, listen } from "../server/index.js";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

interface Opened {
  channel_id: string;
  title: string;
  words: number;
  watch_command: string;
}

interface ReaderStateResult {
  channel_id: string;
  document: { title: string; format: string; text: string; words: number } | null;
  threads: { thread_id: string; quote: string; messages: { id: string; role: string; text: string }[] }[];
}

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };

/** The text of an error result. @throws when the result is not an error. */
function errorText(result: ToolResult): string {
  assert.equal(result.isError, true, `expected an error, got ${JSON.stringify(result.structuredContent)}`);
  return (result.content as { type: string; text: string }[]).map((block) => block.text).join("\n");
}

let dataDir: string;
let cleanup: () => Promise<void>;
let model: Client;
let app: Client;
let files: string;

before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  files = join(dataDir, "files");
  await mkdir(files);
  [model, app] = await Promise.all([connectServer(dataDir), connectServer(dataDir)]);
});
after(async () => {
  await Promise.all([model.close(), app.close()]);
  await cleanup();
});

describe("open_reader", () => {
  test("is visible to the model and names the reader's ui:// resource; the state tools are app-only", async () => {
    const { tools } = await model.listTools();
    const meta = (name: string) =>
      tools.find((tool) => tool.name === name)?._meta as { ui?: { resourceUri?: string; visibility?: string[] } } | undefined;
    assert.equal(meta("open_reader")?.ui?.resourceUri, "ui://backchannel/reader.html");
    assert.equal(meta("open_reader")?.ui?.visibility, undefined);
    assert.deepEqual(meta("reader_state")?.ui?.visibility, ["app"]);
    assert.deepEqual(meta("reader_record")?.ui?.visibility, ["app"]);
    assert.deepEqual(meta("reader_position")?.ui?.visibility, ["app"]);
    const { contents } = await model.readResource({ uri: "ui://backchannel/reader.html" });
    assert.equal(contents[0]?.mimeType, "text/html;profile=mcp-app");
    const html = contents[0] && "text" in contents[0] ? contents[0].text : "";
    assert.match(html, /<html/);
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href="http/, "the reader loads nothing from elsewhere");
  });

  test("stores the document but answers the model with one summary, never the document", async () => {
    const secret = "The marmots convene at dawn to discuss tariffs.";
    const opened = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { markdown: `# Marmots\n\n${secret}\n` } }));
    assert.match(opened.channel_id, /^ch-[a-z0-9]+-[0-9a-f]{20}$/);
    assert.equal(opened.title, "Marmots", "the first heading is the title");
    assert.equal(opened.words, 9, "the heading's # is not a word");
    assert.match(opened.watch_command, new RegExp(` watch ${opened.channel_id} --home \\S+$`));
    const result = await model.callTool({ name: "open_reader", arguments: { markdown: secret, title: "T" } });
    assert.doesNotMatch(JSON.stringify(result), /marmots convene/i);

    // Another process (the app's session) restores it.
    const state = structured<ReaderStateResult>(await app.callTool({ name: "reader_state", arguments: { channel_id: opened.channel_id } }));
    assert.equal(state.document?.text, `# Marmots\n\n${secret}\n`);
    assert.equal(state.document?.format, "markdown");
    assert.deepEqual(state.threads, []);
  });

  test("takes one of markdown, text and path (none: the user is asked, where the client can ask; see awareness.test.ts)", async () => {
    assert.match(
      errorText(await model.callTool({ name: "open_reader", arguments: { title: "nothing" } })),
      /as markdown, text or path \(this client cannot ask/,
    );
    assert.match(
      errorText(await model.callTool({ name: "open_reader", arguments: { text: "a", markdown: "b" } })),
      /one of markdown, text or path, not several/,
    );
    assert.match(errorText(await model.callTool({ name: "open_reader", arguments: { text: "  \n" } })), /the document is empty/);
  });

  test("reads a local markdown file, titled by its heading", async () => {
    const path = join(files, "notes.md");
    await writeFile(path, "\uFEFF# Field notes\n\nSome *words* here.\n");
    const opened = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { path } }));
    assert.equal(opened.title, "Field notes");
    const state = structured<ReaderStateResult>(await app.callTool({ name: "reader_state", arguments: { channel_id: opened.channel_id } }));
    assert.equal(state.document?.format, "markdown");
    assert.equal(state.document?.text, "# Field notes\n\nSome *words* here.\n", "the byte-order mark is dropped");
  });

  test("a plain text file is text, titled by its name", async () => {
    const path = join(files, "plain.txt");
    await writeFile(path, "just text\n");
    const opened = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { path } }));
    assert.equal(opened.title, "plain.txt");
  });

  test("a missing file: says so and where relative paths start", async () => {
    const text = errorText(await model.callTool({ name: "open_reader", arguments: { path: join(files, "nope.md") } }));
    assert.match(text, /no file at .*nope\.md: check the path/);
  });

  test("a folder: says to give a file", async () => {
    assert.match(errorText(await model.callTool({ name: "open_reader", arguments: { path: files } })), /not a regular file|is a folder/);
  });

  test("a binary file: refused as binary", async () => {
    const path = join(files, "image.png");
    await writeFile(path, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]));
    assert.match(errorText(await model.callTool({ name: "open_reader", arguments: { path } })), /looks binary.*UTF-8 text or markdown only/);
  });

  test("a file that is not UTF-8: refused with what to do", async () => {
    const path = join(files, "latin1.txt");
    await writeFile(path, Buffer.from("caf\xe9 cr\xe8me", "latin1"));
    assert.match(errorText(await model.callTool({ name: "open_reader", arguments: { path } })), /not valid UTF-8 text: convert it to UTF-8/);
  });

  test("a file over the size limit: refused with its size and the limit", async () => {
    const path = join(files, "big.md");
    await writeFile(path, "word ".repeat(210_000));
    assert.match(
      errorText(await model.callTool({ name: "open_reader", arguments: { path } })),
      /is 1050000 bytes, more than the 1048576 the reader opens/,
    );
  });
});

describe("reader_record", () => {
  test("appends to a thread, idempotent by message id; a new document clears the threads", async () => {
    const { channel_id } = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { text: "One two three." } }));
    const record = (id: string, role: "user" | "agent", text: string) =>
      app.callTool({
        name: "reader_record",
        arguments: {
          channel_id,
          thread_id: "t-1",
          quote: "two",
          paragraph: "One two three.",
          anchor: { block: 0, start: 4, end: 7 },
          message: { id, role, text },
        },
      });
    assert.deepEqual(structured(await record("q-1", "user", "Why two?")), { recorded: true, messages: 1 });
    assert.deepEqual(structured(await record("ui:1", "agent", "Because.")), { recorded: true, messages: 2 });
    assert.deepEqual(structured(await record("ui:1", "agent", "Because.")), { recorded: false, messages: 2 });
    const state = structured<ReaderStateResult>(await app.callTool({ name: "reader_state", arguments: { channel_id } }));
    assert.deepEqual(
      state.threads.map((thread) => [thread.thread_id, thread.quote, thread.messages.map((message) => `${message.role}:${message.text}`)]),
      [["t-1", "two", ["user:Why two?", "agent:Because."]]],
    );

    // The same text again keeps the threads; a different one drops them (their anchors point into the old text).
    await model.callTool({ name: "open_reader", arguments: { text: "One two three.", channel_id } });
    assert.equal(structured<ReaderStateResult>(await app.callTool({ name: "reader_state", arguments: { channel_id } })).threads.length, 1);
    await model.callTool({ name: "open_reader", arguments: { text: "Something else.", channel_id } });
    assert.equal(structured<ReaderStateResult>(await app.callTool({ name: "reader_state", arguments: { channel_id } })).threads.length, 0);
  });

  test("notify_ui's answer goes into its thread's record as ui:<seq>, once; one for a thread never recorded changes nothing", async () => {
    const { channel_id } = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { text: "Four five six." } }));
    const passage = { channel_id, thread_id: "t-a", quote: "five", paragraph: "Four five six.", anchor: { block: 0, start: 5, end: 9 } };
    await app.callTool({ name: "reader_record", arguments: { ...passage, message: { id: "q-1", role: "user", text: "Why five?" } } });
    const answer = async (thread_id: string, text: string) =>
      structured<{ seq: number }>(await model.callTool({ name: "notify_ui", arguments: { channel_id, event: "answer", data: { thread_id, text } } }))
        .seq;
    const seq = await answer("t-a", "Because it is.");
    await answer("t-unknown", "Nobody asked.");
    const messages = () =>
      app
        .callTool({ name: "reader_state", arguments: { channel_id } })
        .then((result) =>
          structured<ReaderStateResult>(result).threads.map((thread) => [
            thread.thread_id,
            thread.messages.map((m) => `${m.id} ${m.role}:${m.text}`),
          ]),
        );
    assert.deepEqual(await messages(), [["t-a", ["q-1 user:Why five?", `ui:${seq} agent:Because it is.`]]]);
    // A reader that records the answer as well (as one from before this did) adds nothing.
    const again = await app.callTool({
      name: "reader_record",
      arguments: { ...passage, message: { id: `ui:${seq}`, role: "agent", text: "Because it is." } },
    });
    assert.deepEqual(structured(again), { recorded: false, messages: 2 });
    assert.deepEqual(await messages(), [["t-a", ["q-1 user:Why five?", `ui:${seq} agent:Because it is.`]]]);
  });

  test("keeps a thread's draft while it is typed after the thread's last message; recording the question drops it", async () => {
    const { channel_id } = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { text: "Four five six." } }));
    const passage = { channel_id, thread_id: "t-d", quote: "five", paragraph: "Four five six.", anchor: { block: 0, start: 5, end: 9 } };
    const draft = (text: string, after: string | null) => app.callTool({ name: "reader_record", arguments: { ...passage, draft: { text, after } } });
    const drafts = async () =>
      structured<ReaderStateResult & { drafts: { thread_id: string; text: string; after: string | null }[] }>(
        await app.callTool({ name: "reader_state", arguments: { channel_id } }),
      ).drafts.map((kept) => `${kept.thread_id}:${kept.text}:${kept.after}`);

    // A passage never asked about: its draft is kept with it, and replaced by the next.
    assert.deepEqual(structured(await draft("Why fi", null)), { recorded: true, messages: 0 });
    assert.deepEqual(structured(await draft("Why five?", null)), { recorded: true, messages: 0 });
    assert.deepEqual(await drafts(), ["t-d:Why five?:null"]);
    // Sent: recording the question drops the draft, and a save that arrives late is refused.
    await app.callTool({ name: "reader_record", arguments: { ...passage, message: { id: "q-1", role: "user", text: "Why five?" } } });
    assert.deepEqual(await drafts(), []);
    assert.deepEqual(structured(await draft("Why five?", null)), { recorded: false, messages: 1 });
    assert.deepEqual(await drafts(), []);
    // A follow-up typed after the last message is kept; an answer keeps it; an empty text drops it.
    assert.deepEqual(structured(await draft("And six?", "q-1")), { recorded: true, messages: 1 });
    await app.callTool({ name: "reader_record", arguments: { ...passage, message: { id: "ui:9", role: "agent", text: "Because." } } });
    assert.deepEqual(await drafts(), ["t-d:And six?:q-1"]);
    assert.deepEqual(structured(await draft("", "ui:9")), { recorded: true, messages: 2 });
    assert.deepEqual(await drafts(), []);

    // A message and a draft at once, or a withdrawn draft, is refused saying what to give.
    const both = await app.callTool({
      name: "reader_record",
      arguments: { ...passage, message: { id: "q-2", role: "user", text: "x" }, draft: { text: "x", after: null } },
    });
    assert.match(errorText(both), /message or draft/);
    const withdrawn = await app.callTool({ name: "reader_record", arguments: { ...passage, draft: { text: "x", after: null }, withdraw: true } });
    assert.match(errorText(withdrawn), /withdraw goes with a message/);
  });

  test("reader_state with gzip: true sends the document's text compressed, and it unpacks to the stored text", async () => {
    const text = `${"A line of the manual that repeats. ".repeat(2_000)}\nThe end: é ✓ 🙂.\n`;
    const { channel_id } = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { markdown: text } }));
    const plain = structured<ReaderStateResult>(await app.callTool({ name: "reader_state", arguments: { channel_id } }));
    assert.equal(plain.document?.text, text, "without gzip the text comes as it is");
    const packed = structured<{ document: { text?: string; text_gzip?: string; title: string } }>(
      await app.callTool({ name: "reader_state", arguments: { channel_id, gzip: true } }),
    );
    assert.equal(packed.document.text, undefined);
    assert.equal(packed.document.title, plain.document?.title);
    assert.ok(packed.document.text_gzip!.length < text.length / 10, `${packed.document.text_gzip!.length} characters for ${text.length}`);
    assert.equal(gunzipSync(Buffer.from(packed.document.text_gzip!, "base64")).toString("utf8"), text);
  });

  test("an ask that names its history (history_ref) reaches the agent with the recorded history; a wrong one is refused", async () => {
    const { channel_id } = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { text: "One two three." } }));
    const passage = { thread_id: "t-ref", quote: "two", paragraph: "One two three." };
    const record = (id: string, role: "user" | "agent", text: string) =>
      app.callTool({
        name: "reader_record",
        arguments: { channel_id, ...passage, anchor: { block: 0, start: 4, end: 7 }, message: { id, role, text } },
      });
    const history = [
      { role: "user" as const, text: "Why two?" },
      { role: "agent" as const, text: `Because ${"it is ".repeat(9_000)}so.` },
    ];
    await record("q-1", "user", history[0]!.text);
    await record("ui:1", "agent", history[1]!.text);
    // The follow-up itself is recorded before it is sent: the record holds one turn more than the history.
    await record("q-2", "user", "And three?");
    const ask = (ref: { turns: number; digest: string }) =>
      app.callTool({
        name: "notify_agent",
        arguments: { channel_id, event: "ask", data: { ...passage, question: "And three?", history: [], history_ref: ref } },
      });
    structured(await ask({ turns: 2, digest: historyDigest(history) }));
    const { messages } = structured<{ messages: { event: string; data: Record<string, unknown> }[] }>(
      await model.callTool({ name: "poll_agent_messages", arguments: { channel_id } }),
    );
    assert.deepEqual(messages.at(-1)?.data, { ...passage, question: "And three?", history });

    const refused = [
      await ask({ turns: 2, digest: historyDigest([history[0]!, { role: "agent", text: "Something else." }]) }),
      await ask({ turns: 4, digest: historyDigest(history) }),
    ];
    for (const result of refused) {
      assert.match(errorText(result), /send the ask with its whole history/);
      assert.equal((result.structuredContent as { error: { code: string } }).error.code, "HISTORY_MISMATCH");
    }
    const malformed = await app.callTool({
      name: "notify_agent",
      arguments: {
        channel_id,
        event: "ask",
        data: { ...passage, question: "?", history: [{ role: "user", text: "x" }], history_ref: { turns: 1, digest: "zz" } },
      },
    });
    assert.equal((malformed.structuredContent as { error: { code: string } }).error.code, "INVALID_DATA");
    const { messages: after } = structured<{ messages: unknown[] }>(await model.callTool({ name: "poll_agent_messages", arguments: { channel_id } }));
    assert.equal(after.length, 0, "nothing refused was queued");
  });

  test("reader_position keeps the block at the top; reader_state returns it, and a document with another text starts at the top", async () => {
    const markdown = "# Far\n\nOne.\n\nTwo.\n";
    const { channel_id } = structured<Opened>(await model.callTool({ name: "open_reader", arguments: { markdown } }));
    const position = async () => structured<{ position: unknown }>(await app.callTool({ name: "reader_state", arguments: { channel_id } })).position;
    assert.equal(await position(), null, "none before the person scrolls");
    assert.deepEqual(structured(await app.callTool({ name: "reader_position", arguments: { channel_id, block: 2 } })), { block: 2 });
    assert.deepEqual(await position(), { block: 2 });
    assert.match(errorText(await app.callTool({ name: "reader_position", arguments: { channel_id, block: -1 } })), /block/);
    structured(await model.callTool({ name: "open_reader", arguments: { markdown, channel_id } }));
    assert.deepEqual(await position(), { block: 2 }, "the same text keeps its places");
    structured(await model.callTool({ name: "open_reader", arguments: { markdown: "# Other\n", channel_id } }));
    assert.equal(await position(), null, "another text's blocks are other places");
  });

  test("a channel without a document: reader_state says so, harmlessly", async () => {
    const state = structured<ReaderStateResult>(await model.callTool({ name: "reader_state", arguments: { channel_id: "never-opened" } }));
    assert.equal(state.document, null);
  });
});

describe("over Streamable HTTP", () => {
  let server: Server;
  let url: URL;
  before(async () => {
    server = createHttpServer(createMcpRequestListener({ store: new FileStore({ dataDir }) }));
    url = new URL("/mcp", await listen(server));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("serves the same tools; open_reader's path is off", async () => {
    const client = new Client({ name: "http-test", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      const path = join(files, "notes.md");
      assert.match(errorText(await client.callTool({ name: "open_reader", arguments: { path } })), /path works only when backchannel runs on stdio/);
      const opened = structured<Opened>(await client.callTool({ name: "open_reader", arguments: { text: "hello there" } }));
      assert.equal(opened.words, 2);
    } finally {
      await client.close();
    }
  });

  test("refuses a request from a foreign origin or for a foreign host name", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const foreignOrigin = await fetch(url, { method: "POST", body, headers: { ...headers, origin: "https://evil.example" } });
    assert.equal(foreignOrigin.status, 403);
    // fetch() will not forge Host, so use node:http for the DNS-rebinding case.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { ...headers, host: "evil.example" } }, (res) => resolve(res.statusCode ?? 0));
      req.on("error", reject);
      req.end(body);
    });
    assert.equal(status, 403);
  });
});
