/**
 * Ending a waiting poll over stateless Streamable HTTP, where every request is served
 * by a fresh server instance: through a real HTTP server (node:http and the SDK's
 * handler, as `serve --http` runs them) on a real file store.
 *
 * - A client that closes its request (what a 2026-07-28 client does to cancel, and
 *   what a host does when it gives up) ends the wait at once.
 * - A 2025-11-25 client cancels with `notifications/cancelled` in a request of its own:
 *   that ends the poll it names, and the poll answers (so a host that waits for the
 *   answer of a cancelled call lets go of its connection).
 * - Request ids are per client: when two waiting polls share the cancelled id, neither ends.
 * - A waiting poll's response headers go out while it waits, not with its answer.
 *
 * The store is the real FileStore, subclassed only to report when a poll starts and
 * stops waiting (./support/observed-store.ts): nothing else shows from outside whether
 * a server still waits.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpRequestListener, listen } from "../server/transports/http.js";
import { tempDataDir } from "./support/helpers.js";
import { ObservedStore } from "./support/observed-store.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

let dataDir: string;
let cleanup: () => Promise<void>;
let store: ObservedStore;
let server: Server;
let url: URL;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  store = new ObservedStore({ dataDir });
  server = createHttpServer(createMcpRequestListener({ store }));
  url = new URL("/mcp", await listen(server));
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await cleanup();
});

/** POSTs one JSON-RPC message; resolves with the response's text. */
async function post(message: object, signal?: AbortSignal): Promise<string> {
  const response = await fetch(url, { method: "POST", headers: HEADERS, body: JSON.stringify(message), ...(signal ? { signal } : {}) });
  return response.text();
}

/** A tools/call of poll_ui_messages with JSON-RPC id `id`, waiting up to `waitMs` (default 20,000). */
function pollRequest(id: number, channelId: string, waitMs = 20_000) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "poll_ui_messages", arguments: { channel_id: channelId, after: 0, wait_ms: waitMs } },
  };
}

describe("a waiting poll over stateless HTTP", () => {
  test("sends its response headers while it waits, not with its answer", async () => {
    const wait = store.watch("headers");
    const client = new AbortController();
    // fetch resolves once the headers are in: it must do so before the poll stops waiting.
    // The wait stays under 15 s, when the SDK writes a keep-alive comment (which would send them).
    const body = JSON.stringify(pollRequest(1, "headers", 10_000));
    const headers = fetch(url, { method: "POST", headers: HEADERS, body, signal: client.signal });
    const first = await Promise.race([headers.then(() => "headers"), wait.ended.then(() => "the answer")]);
    try {
      assert.equal(first, "headers", "the response's headers came only with the poll's answer");
      assert.equal((await headers).headers.get("content-type"), "text/event-stream");
    } finally {
      client.abort();
      await headers.then((response) => response.body?.cancel()).catch(() => undefined);
    }
  });

  test("ends its wait at once when the client closes the request", async () => {
    const wait = store.watch("closed");
    const client = new AbortController();
    const call = post(pollRequest(1, "closed"), client.signal).catch((error: Error) => error.name);
    await wait.began;
    client.abort();
    assert.equal(await call, "AbortError");
    const waitedMs = await wait.ended;
    assert.ok(waitedMs < 2_000, `the poll waited ${waitedMs} ms of its 20,000`);
  });

  test("ends its wait, and answers, when a 2025-11-25 client cancels it in another request", async () => {
    const wait = store.watch("cancelled");
    const client = new Client({ name: "http-cancel-test", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      const cancel = new AbortController();
      const call = client.callTool(
        { name: "poll_ui_messages", arguments: { channel_id: "cancelled", after: 0, wait_ms: 20_000 } },
        { signal: cancel.signal },
      );
      const rejected = assert.rejects(call);
      await wait.began;
      cancel.abort();
      await rejected;
      const waitedMs = await wait.ended;
      assert.ok(waitedMs < 2_000, `the poll waited ${waitedMs} ms of its 20,000`);
    } finally {
      await client.close();
    }
    // The same with raw requests, to see the answer the SDK client discards.
    const raw = store.watch("cancelled-raw");
    const answer = post(pollRequest(41, "cancelled-raw"));
    await raw.began;
    await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 41, reason: "a send goes first" } });
    assert.match(await answer, /"id":41/);
    assert.ok((await raw.ended) < 2_000);
  });

  test("does not end when two waiting polls share the cancelled id (two clients)", async () => {
    const [first, second] = [store.watch("same-id-a"), store.watch("same-id-b")];
    const answers = [post(pollRequest(7, "same-id-a")), post(pollRequest(7, "same-id-b"))];
    await Promise.all([first.began, second.began]);
    await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
    // Each poll ends only with its message: had the cancel ended one, it would have answered with none.
    const agent = new Client({ name: "http-cancel-agent", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await agent.connect(new StreamableHTTPClientTransport(url));
    try {
      for (const channel_id of ["same-id-a", "same-id-b"]) {
        await agent.callTool({ name: "notify_ui", arguments: { channel_id, event: "status", data: { text: channel_id } } });
      }
    } finally {
      await agent.close();
    }
    const [a, b] = await Promise.all(answers);
    assert.match(a!, /"text":"same-id-a"/);
    assert.match(b!, /"text":"same-id-b"/);
  });
});
