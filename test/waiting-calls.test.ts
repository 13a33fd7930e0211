/**
 * Waiting calls are capped per principal and per process, through real processes: a
 * `serve --http --auth tokens` flooded with thousands of long-polls of one principal over
 * real HTTP (one socket each), while another principal works beside it. Past the cap a
 * call is refused before a server instance is built for it (server/transports/wait-refusal.ts):
 * without that, a loaded CI saw the second wave of refusals alone grow the server by 237 MiB.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { rssMiB, serveWithTokens, stopHttpServers } from "./support/http-serve.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

const FLOOD = 2000;

after(stopHttpServers);

/** One waiting call, sent on a socket of its own. */
interface Flooded {
  /** Resolves when the server took the request (its answer's headers came). */
  taken: Promise<void>;
  /** What the server has answered so far. */
  body(): string;
  /** Whether the answer is complete. */
  done(): boolean;
  end(): void;
}

/** POSTs one `tools/call` of `tool` with `args` as `token`, without a client library: as many at once as a flood wants. */
function flood(url: URL, token: string, id: number, tool: string, args: Record<string, unknown>): Flooded {
  let body = "";
  let complete = false;
  const payload = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } });
  const req = request(url, {
    method: "POST",
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
  });
  const taken = new Promise<void>((resolve, reject) => {
    req.on("response", (res) => {
      resolve();
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => (complete = true));
      res.on("error", () => undefined);
    });
    req.on("error", reject);
  });
  req.end(payload);
  return { taken, body: () => body, done: () => complete, end: () => req.destroy() };
}

test(`two waves of ${FLOOD} waiting polls of one principal: the others stay fast, the server's memory stops growing, the calls past the cap are refused at once with WAIT_LIMIT`, {
  timeout: 300_000,
}, async (t) => {
  const {
    url,
    process: child,
    tokens: { mallory, bob },
    cleanup,
  } = await serveWithTokens(["mallory", "bob"]);
  const connect = async (token: string) => {
    const client = new Client({ name: "waiting-calls-test", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };
  const [bobClient, malloryClient] = [await connect(bob), await connect(mallory)];
  const flooded: Flooded[] = [];
  try {
    /** Bob's notify_ui and poll, one after the other, in ms. */
    const bobsTurn = async () => {
      const started = Date.now();
      const sent = await bobClient.callTool({ name: "notify_ui", arguments: { channel_id: "bobs", event: "e", data: {} } });
      assert.notEqual(sent.isError, true);
      const polled = await bobClient.callTool({ name: "poll_ui_messages", arguments: { channel_id: "bobs" } });
      assert.notEqual(polled.isError, true);
      return Date.now() - started;
    };
    /** Mallory's next `FLOOD` waiting polls, once the server took them all. */
    const wave = async () => {
      const sent = Array.from({ length: FLOOD }, (_, index) =>
        flood(url, mallory, flooded.length + index + 1, "poll_agent_messages", { channel_id: `m-${index % 50}`, wait_ms: 240_000 }),
      );
      flooded.push(...sent);
      await Promise.all(sent.map((one) => one.taken));
    };
    const quiet = await bobsTurn();
    const rss = [rssMiB(child.pid!)];
    const turns = [quiet];
    for (let index = 0; index < 2; index++) {
      await wave();
      turns.push(await bobsTurn());
      rss.push(rssMiB(child.pid!));
    }
    const refused = flooded.filter((one) => one.done() && /WAIT_LIMIT/.test(one.body()));
    const waiting = flooded.filter((one) => !one.done());
    t.diagnostic(
      `Bob's notify_ui + poll: ${turns.join(" → ")} ms (quiet, beside ${FLOOD}, beside ${2 * FLOOD} sent waits); server RSS ${rss.join(" → ")} MiB; ` +
        `${waiting.length} waiting, ${refused.length} refused`,
    );

    assert.ok(Math.max(turns[1]!, turns[2]!) < 5000, `Bob's notify_ui + poll took ${turns.slice(1).join(", ")} ms beside the flood`);
    assert.ok(rss[2]! - rss[1]! < 60, `the second wave grew the server by ${rss[2]! - rss[1]!} MiB more (${rss.join(" → ")} MiB)`);
    assert.equal(waiting.length, 100, "as many of Mallory's calls wait as the cap per principal");
    assert.equal(refused.length + waiting.length, 2 * FLOOD, "every call past the cap is refused at once");
    assert.match(
      refused[0]!.body(),
      /too many waiting calls: your account has 100 waiting calls on this server \(its limit per account\); nothing was read or acknowledged/,
    );

    // Every tool that waits takes a slot; one that does not wait needs none.
    for (const [name, args] of [
      ["watch_agent_messages", { channel_id: "m-1", wait_ms: 20_000 }],
      ["poll_ui_messages", { channel_id: "m-1", wait_ms: 20_000 }],
    ] as const) {
      const result = await malloryClient.callTool({ name, arguments: args });
      assert.equal((result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code, "WAIT_LIMIT", name);
    }
    const unwaited = await malloryClient.callTool({ name: "poll_agent_messages", arguments: { channel_id: "m-1" } });
    assert.notEqual(unwaited.isError, true, "a poll without wait_ms is served");
    // A slot is given back when its call ends.
    for (const one of flooded) one.end();
    const freed = Date.now();
    let watched = await malloryClient.callTool({ name: "watch_agent_messages", arguments: { channel_id: "m-1", wait_ms: 10 } });
    while (watched.isError && Date.now() - freed < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      watched = await malloryClient.callTool({ name: "watch_agent_messages", arguments: { channel_id: "m-1", wait_ms: 10 } });
    }
    assert.notEqual(watched.isError, true, "the slots came back once the waiting calls ended");
  } finally {
    for (const one of flooded) one.end();
    await bobClient.close();
    await malloryClient.close();
    await cleanup();
  }
});
