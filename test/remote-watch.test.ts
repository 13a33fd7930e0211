/**
 * The remote watcher, `backchannel watch <channel> --url …/mcp`, against a real
 * `backchannel serve --http` process: it wakes on the app's message through the server
 * (its own store settings point nowhere, so it cannot have read the store), prints the
 * local watcher's lines, exits with its codes, takes no message, outlives a server
 * restart, and says what to do when the URL or the server is wrong.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { FileStore } from "../store/file/file-store.js";
import { after, before, describe, test } from "node:test";
import { createServer as createHttpServer } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { listen } from "../server/transports/http.js";
import { freePort } from "../deploy/free-port.js";
import { startProcess, type RunningProcess } from "../deploy/process.js";
import { MAX_REMOTE_WAIT_MS } from "../core/limits.js";
import type { QueueMessage } from "../protocol/message.js";
import { WATCH_TOOL } from "../server/tools/watch-tools.js";
import { summaryLine } from "../watcher/watch.js";
import { CLI, spawnWatcher, structured, tempDataDir, type WatcherProcess } from "./support/helpers.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

let dataDir: string;
let elsewhere: string;
const cleanups: (() => Promise<void>)[] = [];
let server: RunningProcess;
let port: number;
let url: string;
let app: Client;

/** Starts `backchannel serve --http` on `dataDir` and `port` (0: a free one). */
async function startServer(onPort: number): Promise<{ process: RunningProcess; url: string }> {
  const { process: running, match } = await startProcess({
    name: "serve --http",
    program: process.execPath,
    args: [CLI, "serve", "--http", "--host", "127.0.0.1", "--port", String(onPort)],
    env: { BACKCHANNEL_HOME: dataDir },
    ready: /MCP server at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  });
  return { process: running, url: match[1]! };
}

/**
 * `backchannel watch` with `args`; its store settings name an empty data directory and
 * an unreachable Redis, so only the server can tell it anything.
 */
function watch(args: string[], env: Record<string, string> = {}): WatcherProcess {
  return spawnWatcher(elsewhere, args, {
    BACKCHANNEL_TOKEN: "bc_not-checked-by-a-loopback-server",
    BACKCHANNEL_STORE: "redis://127.0.0.1:1",
    ...env,
  });
}

async function send(channelId: string, event: string, data: Record<string, unknown>): Promise<void> {
  structured(await app.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event, data } }));
}

before(async () => {
  const [served, empty] = [await tempDataDir(), await tempDataDir()];
  cleanups.push(served.cleanup, empty.cleanup);
  dataDir = served.dir;
  elsewhere = empty.dir;
  ({ process: server, url } = await startServer(0));
  port = Number(new URL(url).port);
  app = new Client({ name: "remote-watch-test-app", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
  await app.connect(new StreamableHTTPClientTransport(new URL(url)));
});
after(async () => {
  await app?.close();
  await server?.stop();
  for (const cleanup of cleanups) await cleanup();
});

describe("backchannel watch --url", () => {
  test("wakes on the app's message through the server, prints the local watcher's line, and takes nothing", async () => {
    const watcher = watch(["remote-exit", "--url", url, "--allow-missing"]);
    await watcher.ready();
    await send("remote-exit", "ask", { question: "What does the second paragraph mean?" });
    assert.equal(await watcher.exited, 0, watcher.stderr());
    const agent = new Client({ name: "remote-watch-test-agent", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await agent.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const { messages } = structured<{ messages: QueueMessage[] }>(
        await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: "remote-exit" } }),
      );
      assert.equal(messages.length, 1, "the watcher left the message for the agent");
      assert.equal(watcher.stdout(), `${summaryLine("remote-exit", messages)}\n`);
    } finally {
      await agent.close();
    }
  });

  test("--follow prints one line per message, never one twice, and exits 2 at the timeout with a re-arm command naming the URL", async () => {
    const watcher = watch(["remote-follow", "--url", url, "--follow", "--allow-missing", "--timeout", "6"]);
    await watcher.ready();
    await send("remote-follow", "ask", { question: "first?" });
    assert.deepEqual(await watcher.lines(1), ["remote-follow #1 ask: first?"]);
    await send("remote-follow", "ask", { question: "second?" });
    assert.deepEqual(await watcher.lines(2), ["remote-follow #1 ask: first?", "remote-follow #2 ask: second?"]);
    assert.equal(await watcher.exited, 2, watcher.stderr());
    const lines = watcher.stdout().trim().split("\n");
    assert.equal(lines.length, 3, watcher.stdout());
    assert.match(
      lines[2]!,
      new RegExp(`^No message on remote-follow after 6 s\\. Re-arm: .* watch remote-follow --follow --url ${url.replace(/[.]/g, "\\.")}$`),
    );
  });

  test("--follow tells every message of a channel made again (a new epoch), though their seqs were told before", async () => {
    const watcher = watch(["remote-epoch", "--url", url, "--follow", "--allow-missing", "--timeout", "60"]);
    await watcher.ready();
    await send("remote-epoch", "ask", { question: "first?" });
    await send("remote-epoch", "ask", { question: "second?" });
    await watcher.lines(2);
    await new FileStore({ dataDir }).remove("remote-epoch");
    await send("remote-epoch", "ask", { question: "again?" });
    const lines = await watcher.lines(3);
    watcher.child.kill("SIGTERM");
    await watcher.exited;
    assert.deepEqual(lines, ["remote-epoch #1 ask: first?", "remote-epoch #2 ask: second?", "remote-epoch #1 ask: again?"]);
  });

  test("the re-arm line at the timeout names the channel by the title the server gives", async () => {
    const opened = structured<{ channel_id: string }>(
      await app.callTool({ name: "open_reader", arguments: { markdown: "# Remote notes\n\nNobody asks." } }),
    );
    const watcher = watch([opened.channel_id, "--url", url, "--timeout", "1"]);
    assert.equal(await watcher.exited, 2, watcher.stderr());
    assert.match(
      watcher.stdout(),
      new RegExp(
        `^No message on ${opened.channel_id} \\("Remote notes"\\) after 1 s\\. Re-arm: .* watch ${opened.channel_id} --url ${url.replace(/[.]/g, "\\.")}\n$`,
      ),
    );
  });

  test("a server that goes away while watching is said once and retried; the watcher wakes once it is back", async () => {
    const watcher = watch(["remote-restart", "--url", url, "--allow-missing", "--timeout", "60"]);
    await watcher.ready();
    await server.stop("SIGKILL");
    await watcher.stderrMatching(/still watching/);
    ({ process: server } = await startServer(port));
    await send("remote-restart", "ask", { question: "still there?" });
    assert.equal(await watcher.exited, 0, watcher.stderr());
    assert.match(watcher.stdout(), /^1 message waiting on remote-restart \(ask\)/);
    assert.equal(watcher.stderr().match(/still watching/g)?.length, 1, watcher.stderr());
  });

  test("a bad channel id, a bad URL, plain http beyond loopback, no server and a wrong path exit 1, saying what to do", async () => {
    const closed = await freePort();
    const cases: [string[], RegExp][] = [
      [["../x", "--url", url], /invalid channel id "\.\.\/x"/],
      [["ch", "--url", "not a url"], /is not a URL: give the server's MCP endpoint/],
      [["ch", "--url", "ftp://example.com/mcp"], /is not an http\(s\) URL/],
      [["ch", "--url", "http://user:secret@127.0.0.1/mcp"], /must not hold a user or password: put the token in \$BACKCHANNEL_TOKEN/],
      [["ch", "--url", "http://backchannel.example.com/mcp"], /plain http to another machine: .* use https:\/\//],
      [
        ["ch", "--url", `http://127.0.0.1:${closed}/mcp`],
        /cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp \(ECONNREFUSED\): check the URL and that the server runs/,
      ],
      [["ch", "--url", url.replace(/\/mcp$/, "/nope")], /nothing serves MCP at .*\/nope \(404\): give the server's MCP endpoint/],
    ];
    for (const [args, expected] of cases) {
      const watcher = watch(args);
      assert.equal(await watcher.exited, 1, `${args.join(" ")}: ${watcher.stderr()}`);
      assert.match(watcher.stderr(), expected);
      assert.equal(watcher.stdout(), "", "nothing for the agent on stdout");
    }
  });
});

describe("backchannel watch --url on a channel the server does not hold", () => {
  test("ends at once (exit 1) saying what to do; with --allow-missing it waits until an app opens the channel", async () => {
    const opened = structured<{ channel_id: string }>(await app.callTool({ name: "open_reader", arguments: { markdown: "# Typo\n\nText." } }));
    const typo = `${opened.channel_id.slice(0, -1)}${opened.channel_id.endsWith("x") ? "y" : "x"}`;
    const refused = watch([typo, "--url", url, "--timeout", "20"]);
    assert.equal(await refused.exited, 1, refused.stderr());
    assert.equal(refused.stdout(), "");
    assert.match(
      refused.stderr(),
      new RegExp(
        `^backchannel watch: ${url.replace(/[.]/g, "\\.")} has no channel ${typo} for the token in \\$BACKCHANNEL_TOKEN\\. .*add --allow-missing\n$`,
      ),
    );
    const waiting = watch([typo, "--url", url, "--allow-missing", "--timeout", "30"]);
    await waiting.ready();
    assert.match(waiting.stderr(), new RegExp(`no channel ${typo} at .* yet; waiting for an app to open it`));
    await send(typo, "ready", {});
    assert.equal(await waiting.exited, 0, waiting.stderr());
    assert.match(waiting.stdout(), new RegExp(`^1 message waiting on ${typo} \\(ready\\)`));
  });
});

describe("a server without the watch tool", () => {
  test(`an MCP server that offers no ${WATCH_TOOL} (an older backchannel, another server) exits 1 saying to upgrade it`, async () => {
    // A real MCP server over Streamable HTTP (the SDK's own), with one unrelated tool.
    const handler = createMcpHandler(() => {
      const other = new McpServer({ name: "not-backchannel", version: "0.0.0" });
      other.registerTool("echo", { description: "echo" }, async () => ({ content: [{ type: "text", text: "echo" }] }));
      return other;
    });
    const http = createHttpServer(toNodeHandler(handler));
    const base = await listen(http);
    try {
      const watcher = watch(["ch", "--url", new URL("/mcp", base).href]);
      assert.equal(await watcher.exited, 1, watcher.stderr());
      assert.match(watcher.stderr(), new RegExp(`the server has no ${WATCH_TOOL} tool: .*upgrade it`));
      assert.equal(watcher.stdout(), "");
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe("backchannel watch --url against a server that lies", () => {
  /** What the hostile server's watch tool does. */
  let mode: "escapes" | "repeats" | "hangs" | "endless" = "escapes";
  let http: ReturnType<typeof createHttpServer>;
  let hostileUrl: string;
  const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u;

  before(async () => {
    // A real MCP server over Streamable HTTP (the SDK's own) whose watch tool answers as no backchannel would.
    const handler = createMcpHandler(() => {
      const hostile = new McpServer({ name: "hostile", version: "0.0.0" });
      hostile.registerTool(WATCH_TOOL, { description: "lies" }, async (ctx) => {
        if (mode === "hangs") await new Promise((resolve) => ctx.mcpReq.signal.addEventListener("abort", resolve));
        const event = mode === "escapes" ? "\x1b]52;c;ZWNobyBwd25lZA==\x07ask\x1b[2J" : "ask";
        const messages = [{ seq: 1, event, data: { question: "same again" }, ts: "2026-12-01T00:00:00Z" }];
        return { content: [{ type: "text", text: "lies" }], structuredContent: { messages } };
      });
      return hostile;
    });
    const serveMcp = toNodeHandler(handler);
    http = createHttpServer(async (req, res) => {
      let text = "";
      for await (const chunk of req) text += String(chunk);
      const body = text === "" ? undefined : (JSON.parse(text) as { method?: string; id?: number });
      if (mode === "endless" && body?.method === "tools/call") {
        // An answer that never ends: one event whose text goes on as fast as the watcher reads it.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: {"jsonrpc":"2.0","id":${body.id},"result":{"content":[{"type":"text","text":"`);
        const chunk = "x".repeat(64 * 1024);
        while (!res.destroyed) {
          if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
        }
        return;
      }
      await serveMcp(req, res, body);
    });
    hostileUrl = new URL("/mcp", await listen(http)).href;
  });
  after(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  test("an event name with escape sequences is refused as an answer: nothing reaches the terminal, no wake", async () => {
    mode = "escapes";
    const watcher = watch(["ch", "--url", hostileUrl, "--timeout", "2"]);
    assert.equal(await watcher.exited, 2, watcher.stderr());
    assert.match(watcher.stderr(), /not a list of messages/);
    assert.doesNotMatch(watcher.stdout() + watcher.stderr(), UNSAFE);
  });

  test("--follow against a server that ignores after_seq prints the message once, not in a loop", async () => {
    mode = "repeats";
    const watcher = watch(["ch", "--url", hostileUrl, "--timeout", "3", "--follow"]);
    assert.equal(await watcher.exited, 2, watcher.stderr());
    const lines = watcher
      .stdout()
      .split("\n")
      .filter((line) => line.includes("#1 ask"));
    assert.equal(lines.length, 1, watcher.stdout().slice(0, 500));
  });

  test("an answer that never ends is cut at its size limit: the watcher's memory stays bounded, and it says why it stops", async (t) => {
    mode = "endless";
    const watcher = watch(["ch", "--url", hostileUrl, "--timeout", "5"]);
    // The peak resident memory the kernel recorded for the watcher, read until it exits.
    let peakKiB = 0;
    const sampler = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${watcher.child.pid}/status`, "utf8");
        peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
      } catch {
        // It has exited.
      }
    }, 50);
    const code = await watcher.exited;
    clearInterval(sampler);
    const peakMiB = Math.round(peakKiB / 1024);
    t.diagnostic(`the watcher's peak RSS: ${peakMiB} MiB`);
    // Before the limit it grew as fast as the server sent (341 MiB in the 5 s of its timeout).
    assert.ok(peakMiB < 200, `the watcher grew to ${peakMiB} MiB`);
    assert.match(watcher.stderr(), /answer is larger than 16 MiB, more than any backchannel answer can be/);
    assert.equal(code, 1, watcher.stderr());
  });

  test("--timeout holds against a server that never answers", async () => {
    mode = "hangs";
    const started = Date.now();
    const watcher = watch(["ch", "--url", hostileUrl, "--timeout", "2"]);
    assert.equal(await watcher.exited, 2, watcher.stderr());
    const took = Date.now() - started;
    // A safety net: it ended after about 20 s before, about 3 s now; a loaded machine starts node slowly.
    assert.ok(took < 12_000, `--timeout 2 ended after ${took} ms`);
  });
});

describe(WATCH_TOOL, () => {
  test(`is hidden from the model, bounds a single wait to ${MAX_REMOTE_WAIT_MS} ms, and lists only messages above after_seq`, async () => {
    const { tools } = await app.listTools();
    const tool = tools.find((candidate) => candidate.name === WATCH_TOOL);
    assert.deepEqual((tool?._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility, ["app"]);

    const tooLong = await app.callTool({ name: WATCH_TOOL, arguments: { channel_id: "remote-tool", wait_ms: MAX_REMOTE_WAIT_MS + 1 } });
    assert.equal(tooLong.isError, true);

    await send("remote-tool", "ask", { question: "one" });
    await send("remote-tool", "ask", { question: "two" });
    const call = (after_seq: number, wait_ms = 0) =>
      app
        .callTool({ name: WATCH_TOOL, arguments: { channel_id: "remote-tool", after_seq, wait_ms } })
        .then((result) => structured<{ messages: QueueMessage[] }>(result).messages);
    assert.deepEqual(
      (await call(0)).map((message) => message.seq),
      [1, 2],
    );
    assert.deepEqual(
      (await call(1)).map((message) => message.seq),
      [2],
    );
    assert.deepEqual(
      (await call(0)).map((message) => message.seq),
      [1, 2],
      "watching took nothing",
    );
    const waiting = call(2, 10_000);
    await send("remote-tool", "ask", { question: "three" });
    assert.deepEqual(
      (await waiting).map((message) => message.seq),
      [3],
      "a wait ends when a newer message lands",
    );
    const { epoch } = structured<{ epoch: string }>(await app.callTool({ name: WATCH_TOOL, arguments: { channel_id: "remote-tool" } }));
    const since = (after_seq: number, given: string) =>
      app
        .callTool({ name: WATCH_TOOL, arguments: { channel_id: "remote-tool", after_seq, epoch: given } })
        .then((result) => structured<{ messages: QueueMessage[] }>(result).messages.map((message) => message.seq));
    assert.deepEqual(await since(2, epoch), [3], "after_seq holds in its own epoch");
    assert.deepEqual(await since(2, "another-epoch"), [1, 2, 3], "… and means nothing in another: every message is new");
  });
});
