/**
 * Many remote principals, through real processes (`serve --http` with bearer tokens,
 * or OAuth against a real issuer run here): a principal that only reads leaves nothing
 * in the store; the store holds at most `BACKCHANNEL_MAX_PRINCIPALS` principals, and
 * one new to it cannot write past that, while reading still works; the idle sweep
 * removes a principal that holds nothing, which frees room; and a server seeing a new
 * OAuth `sub` per request keeps its memory flat (before: 7 KiB per principal, never
 * given back, and 3 folders each).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { once } from "node:events";
import { readdir, utimes } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { addToken, rssMiB, serveHttp, stopHttpServers } from "./support/http-serve.js";
import { startTestIssuer } from "./support/test-issuer.js";
import { tempDataDir, waitUntil } from "./support/helpers.js";
import { storeKinds } from "./support/stores.js";

after(stopHttpServers);

/** The namespace of `principal` in the store (32 hex digits of its SHA-256). */
function namespaceOf(principal: string): string {
  return createHash("sha256").update(principal).digest("hex").slice(0, 32);
}

/** Sets the access and modification times of `root` and everything below it `ageMs` into the past. */
async function ageEntries(root: string, ageMs: number): Promise<void> {
  const then = new Date(Date.now() - ageMs);
  for (const entry of ["", ...(await readdir(root, { recursive: true }))]) await utimes(join(root, entry), then, then);
}

/** POSTs one JSON-RPC request to `url` as `token`; resolves with the answer's text. */
async function post(url: URL, token: string, method: string, params: Record<string, unknown>): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return response.text();
}

/** Calls tool `name` with `args` as `token`; resolves with the answer's text. */
function call(url: URL, token: string, name: string, args: Record<string, unknown>): Promise<string> {
  return post(url, token, "tools/call", { name, arguments: args });
}

/** Every read a principal can make: tools, resources, and polls with and without a cursor and a wait. */
async function readEverything(url: URL, token: string): Promise<void> {
  assert.match(await post(url, token, "tools/list", {}), /poll_ui_messages/);
  assert.match(await post(url, token, "resources/list", {}), /"resources"/);
  const reads: [string, Record<string, unknown>][] = [
    ["poll_ui_messages", { channel_id: "c-1", after: 0 }],
    ["poll_ui_messages", { channel_id: "c-1" }],
    ["poll_ui_messages", { channel_id: "c-1", after: 5, wait_ms: 50 }],
    ["reader_state", { channel_id: "c-1" }],
    ["app_state", { channel_id: "c-1" }],
    ["watch_agent_messages", { channel_id: "c-1", wait_ms: 50 }],
    ["open_app", {}],
  ];
  for (const [name, args] of reads) assert.doesNotMatch(await call(url, token, name, args), /"isError":true/, name);
}

for (const kind of storeKinds()) {
  describe(`principals on the ${kind.name} store`, { skip: kind.skip }, () => {
    test("a principal that only reads leaves nothing in the store; its first write makes its data", async () => {
      const fixture = await kind.start();
      try {
        const tokens = join(fixture.dataDir, "tokens.json");
        const reader = addToken(tokens, "reader");
        const { url } = await serveHttp(["--auth", "tokens", "--tokens", tokens], fixture.env);
        await readEverything(url, reader);
        const namespace = namespaceOf("reader");
        const held = (await fixture.contents()).filter((entry) => entry.includes(namespace));
        assert.deepEqual(held, [], "a principal that only read made something");
        assert.match(await call(url, reader, "notify_ui", { channel_id: "c-1", event: "e" }), /"seq":1/);
        assert.ok(
          (await fixture.contents()).some((entry) => entry.includes(namespace)),
          "the first write made the principal's data",
        );
      } finally {
        await fixture.stop();
      }
    });

    test("the store holds at most BACKCHANNEL_MAX_PRINCIPALS principals: a new one cannot write and is told why and what frees room; it can still read", async () => {
      const fixture = await kind.start();
      try {
        const tokens = join(fixture.dataDir, "tokens.json");
        const [first, second, third, fourth] = ["p-1", "p-2", "p-3", "p-4"].map((principal) => addToken(tokens, principal));
        const { url } = await serveHttp(["--auth", "tokens", "--tokens", tokens], { ...fixture.env, BACKCHANNEL_MAX_PRINCIPALS: "3" });
        for (const token of [first!, second!, third!])
          assert.match(await call(url, token, "notify_ui", { channel_id: "c-1", event: "e" }), /"seq":1/);
        for (const [name, args] of [
          ["notify_ui", { channel_id: "c-1", event: "e" }],
          ["notify_agent", { channel_id: "c-1", event: "ask", data: {} }],
          ["post_wall", { text: "busy" }],
        ] as const) {
          const refused = await call(url, fourth!, name, args);
          assert.match(refused, /"code":"TOO_MANY_PRINCIPALS"/, `${name}: ${refused.slice(0, 300)}`);
        }
        const refused = await call(url, fourth!, "notify_ui", { channel_id: "c-1", event: "e" });
        assert.match(
          refused,
          /this server keeps data for at most 3 accounts and holds that many, so it cannot keep yours: nothing was written\. Reading works meanwhile\. Whoever runs the server can raise BACKCHANNEL_MAX_PRINCIPALS; an account whose channels have all gone unused for 7 days and that keeps no saved app is removed, which frees room/,
        );
        assert.ok(!(await fixture.contents()).some((entry) => entry.includes(namespaceOf("p-4"))), "the refused principal made nothing");
        await readEverything(url, fourth!);
        // The principals the store holds go on writing.
        assert.match(await call(url, first!, "notify_ui", { channel_id: "c-2", event: "e" }), /"seq":1/);
      } finally {
        await fixture.stop();
      }
    });
  });
}

test("the idle sweep removes a principal that holds nothing, which frees room for a new one", { timeout: 60_000 }, async () => {
  const { dir, cleanup } = await tempDataDir();
  try {
    const tokens = join(dir, "tokens.json");
    const [first, second] = ["p-1", "p-2"].map((principal) => addToken(tokens, principal));
    const env = { BACKCHANNEL_HOME: dir, BACKCHANNEL_MAX_PRINCIPALS: "1" };
    const before = await serveHttp(["--auth", "tokens", "--tokens", tokens], env);
    assert.match(await call(before.url, first!, "notify_ui", { channel_id: "c-1", event: "e" }), /"seq":1/);
    // Read with a cursor past it: the message is gone, and the channel is idle from now on.
    assert.match(await call(before.url, first!, "poll_ui_messages", { channel_id: "c-1", after: 1 }), /"messages":\[\]/);
    assert.match(await call(before.url, second!, "notify_ui", { channel_id: "c-1", event: "e" }), /TOO_MANY_PRINCIPALS/);
    const exited = once(before.process, "exit");
    before.process.kill();
    await exited;
    const folder = join(dir, "principals", namespaceOf("p-1"));
    assert.ok(existsSync(folder));
    // The sweep reads idleness from file times: set back past the default 7-day TTL, not waited out.
    await ageEntries(dir, 8 * 24 * 60 * 60 * 1000);
    // A server sweeps a second after it starts.
    const { url } = await serveHttp(["--auth", "tokens", "--tokens", tokens], env);
    await waitUntil(() => !existsSync(folder), "the principal's folder swept", { timeoutMs: 20_000 }).catch(async (error: Error) =>
      assert.fail(`${error.message}: ${(await readdir(folder, { recursive: true })).join(", ")}`),
    );
    assert.match(await call(url, second!, "notify_ui", { channel_id: "c-1", event: "e" }), /"seq":1/);
  } finally {
    await cleanup();
  }
});

test("a new OAuth sub per request: the server's memory stays flat and no folder is made", { timeout: 240_000 }, async (t) => {
  const issuer = await startTestIssuer();
  const { dir, cleanup } = await tempDataDir();
  const publicUrl = "http://127.0.0.1/mcp";
  try {
    const { url, process: child } = await serveHttp(["--auth", "oauth", "--issuer", issuer.url, "--public-url", publicUrl], {
      BACKCHANNEL_HOME: dir,
    });
    let next = 0;
    /** `count` requests, 8 at a time, each of a principal never seen before. */
    const newPrincipals = async (count: number) => {
      for (let sent = 0; sent < count; sent += 8) {
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            const token = await issuer.sign({
              iss: issuer.url,
              aud: publicUrl,
              sub: `user-${next++}`,
              scope: "backchannel",
              exp: Math.floor(Date.now() / 1000) + 600,
            });
            assert.match(await call(url, token, "poll_ui_messages", { channel_id: "c-1", after: 0 }), /"cursor":0/);
          }),
        );
      }
    };
    // Past the principals a server keeps in memory (1,000), and past its heap's growing: then flat.
    await newPrincipals(3000);
    const warm = rssMiB(child.pid!);
    await newPrincipals(6000);
    const grown = rssMiB(child.pid!) - warm;
    t.diagnostic(`server RSS ${warm} MiB after 3,000 principals, ${grown >= 0 ? "+" : ""}${grown} MiB after 6,000 more`);
    // 6,000 principals kept would be about 42 MiB (7 KiB each); RSS moves by some 10 MiB
    // on its own as the heap grows and shrinks (a loaded machine collects late), so the
    // bound is half of what keeping them would cost.
    assert.ok(grown < 21, `6,000 more principals grew the server by ${grown} MiB`);
    assert.ok(!existsSync(join(dir, "principals")), "principals that only read made folders");
  } finally {
    issuer.close();
    await cleanup();
  }
});
