/**
 * Remote serving with authentication, through real processes: `backchannel serve --http`
 * with `--auth tokens` or `--auth oauth` (against a real issuer run here: an HTTP server
 * publishing a key the test generates), reached with plain HTTP requests for what the
 * gate refuses and with the SDK's own client, carrying a bearer token, for the rest.
 * Principals are kept apart on the file store and on Redis alike.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, readFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import { after, before, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { runAtOnce } from "./support/at-once.js";
import { type TestIssuer, startTestIssuer } from "./support/test-issuer.js";
import { addToken, type Served, serveHttp, stopHttpServers } from "./support/http-serve.js";
import { CLI, structured, tempDataDir } from "./support/helpers.js";
import { storeKinds, type StoreFixture } from "./support/stores.js";
import { listen } from "../server/transports/http.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

after(stopHttpServers);

/** Runs the CLI to its end. */
function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 20_000 });
}

/** POSTs tools/list to `url` with `headers`. */
function listTools(url: URL, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}

/** POSTs tools/list to `url` with the Host header `host` (fetch will not forge Host); resolves with the status. */
function listToolsAs(url: URL, host: string, headers: Record<string, string> = {}): Promise<number> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
  const all = {
    host,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
    ...headers,
  };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: all }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** An SDK client connected to `url` with `token` as its bearer token; `modern` speaks 2026-07-28 (else the SDK's default, 2025-11-25). */
async function connect(url: URL, token: string, modern = false): Promise<Client> {
  const client = new Client(
    { name: "remote-auth-test", version: "0.0.0" },
    { capabilities: { extensions: APPS_HOST_EXTENSIONS }, ...(modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}) },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** Calls a tool; resolves with its result as JSON text, with every `replace[0]` written as `replace[1]`. */
async function call(client: Client, name: string, args: Record<string, unknown>, replace?: [string, string]): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const text = JSON.stringify({ isError: result.isError ?? false, content: result.content, structured: result.structuredContent ?? null });
  return replace ? text.replaceAll(replace[0], replace[1]) : text;
}

describe("where serve --http listens", () => {
  test("beyond loopback only with authentication, and then only with a public URL", async () => {
    const { dir, cleanup } = await tempDataDir();
    try {
      const bare = cli(["serve", "--http", "--port", "0", "--host", "0.0.0.0"], { BACKCHANNEL_HOME: dir });
      assert.equal(bare.status, 1);
      assert.match(bare.stderr, /refusing to listen on 0\.0\.0\.0, which is not a loopback address, with no authentication.*--auth tokens/);
      const noUrl = cli(["serve", "--http", "--port", "0", "--host", "0.0.0.0", "--auth", "tokens"], { BACKCHANNEL_HOME: dir });
      assert.equal(noUrl.status, 1);
      assert.match(noUrl.stderr, /--host 0\.0\.0\.0 needs --public-url URL/);
      const noIssuer = cli(["serve", "--http", "--port", "0", "--auth", "oauth", "--public-url", "https://bc.example/mcp"], {
        BACKCHANNEL_HOME: dir,
      });
      assert.equal(noIssuer.status, 1);
      assert.match(noIssuer.stderr, /--auth oauth needs --issuer URL/);
      const noTokens = cli(["serve", "--http", "--port", "0", "--auth", "tokens"], { BACKCHANNEL_HOME: dir });
      assert.equal(noTokens.status, 1);
      assert.match(noTokens.stderr, /no token file at .*tokens\.json: add a token with "backchannel token add <principal>" first/);
      const stdio = cli(["serve", "--auth", "tokens"], { BACKCHANNEL_HOME: dir });
      assert.equal(stdio.status, 1);
      assert.match(stdio.stderr, /--auth goes with --http/);
    } finally {
      await cleanup();
    }
  });

  test("--insecure-no-auth listens beyond loopback, says on stderr why that is dangerous, and accepts the public URL's Host", async () => {
    const { dir, cleanup } = await tempDataDir();
    try {
      const served = await serveHttp(["--host", "0.0.0.0", "--insecure-no-auth", "--public-url", "https://backchannel.test/mcp"], {
        BACKCHANNEL_HOME: dir,
      });
      assert.match(served.stderr(), /--insecure-no-auth: anyone who can reach this address can read, write and delete every channel/);
      assert.match(served.stderr(), /NO AUTHENTICATION/);
      const local = new URL(`http://127.0.0.1:${served.url.port}/mcp`);
      assert.equal((await listTools(local)).status, 200);
      // Behind a reverse proxy the Host is the public one, with or without a port; any other is refused.
      assert.equal(await listToolsAs(local, "backchannel.test"), 200);
      assert.equal(await listToolsAs(local, "BACKCHANNEL.test:443"), 200);
      assert.equal(await listToolsAs(local, "other.test"), 403);
      assert.equal(await listToolsAs(local, "evil.test@backchannel.test"), 403);
      assert.equal(await listToolsAs(local, "backchannel.test", { origin: "https://backchannel.test" }), 200);
      assert.equal(await listToolsAs(local, "backchannel.test", { origin: "https://evil.test" }), 403);
      // Reached at a public URL: a watch command names it, and no single wait nears a remote connector's 60 s.
      const client = await connect(local, "unused");
      try {
        const { tools } = await client.listTools();
        for (const name of ["poll_agent_messages", "poll_ui_messages"]) {
          const waitMs = (tools.find((tool) => tool.name === name)?.inputSchema.properties?.wait_ms ?? {}) as { maximum?: number };
          assert.equal(waitMs.maximum, 25_000, `${name} waits at most 25 s`);
        }
        const opened = structured<{ watch_command: string }>(
          await client.callTool({ name: "open_reader", arguments: { markdown: "# Remote\n\nText." } }),
        );
        assert.match(opened.watch_command, / watch ch-[0-9a-z-]+ --url https:\/\/backchannel\.test\/mcp$/);
      } finally {
        await client.close();
      }
      served.process.kill();
    } finally {
      await cleanup();
    }
  });
});

describe("--auth tokens", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let served: Served;
  let token: string;

  before(async () => {
    ({ dir, cleanup } = await tempDataDir());
    token = addToken(`${dir}/tokens.json`, "alice");
    served = await serveHttp(["--auth", "tokens"], { BACKCHANNEL_HOME: dir });
  });
  after(async () => {
    served.process.kill();
    await cleanup();
  });

  test("40 token adds at once each keep their token, and every printed token is served", async () => {
    const file = `${dir}/concurrent-tokens.json`;
    const runs = Array.from({ length: 40 }, (_, i) => [CLI, "token", "add", `user-${i}`, "--tokens", file]);
    const outcomes = await runAtOnce(runs, process.env, `${dir}/token-start`);
    for (const outcome of outcomes) assert.equal(outcome.code, 0, outcome.stderr);
    const printed = outcomes.map((outcome) => outcome.stdout.trim().split(/\s+/).at(-1)!);
    const kept = (JSON.parse(await readFile(file, "utf8")) as { tokens: { sha256: string }[] }).tokens.map((entry) => entry.sha256);
    const missing = printed.filter((printedToken) => !kept.includes(createHash("sha256").update(printedToken).digest("hex")));
    assert.equal(missing.length, 0, `${missing.length} of 40 printed tokens are not in the file (it keeps ${kept.length})`);
  });

  test("a request without a token gets 401 with the challenge naming the metadata, which is served", async () => {
    const response = await listTools(served.url);
    assert.equal(response.status, 401);
    const challenge = response.headers.get("www-authenticate") ?? "";
    const metadataUrl = `${served.url.origin}/.well-known/oauth-protected-resource/mcp`;
    assert.match(challenge, /^Bearer /);
    assert.ok(challenge.includes(`resource_metadata="${metadataUrl}"`), challenge);
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const metadata = await fetch(new URL(path, served.url));
      assert.equal(metadata.status, 200);
      assert.deepEqual(await metadata.json(), {
        resource: served.url.href,
        scopes_supported: ["backchannel"],
        bearer_methods_supported: ["header"],
        resource_name: "backchannel",
      });
    }
  });

  test("a wrong token gets 401 invalid_token; the right one serves the tools through the SDK client", async () => {
    const wrong = await listTools(served.url, { authorization: `Bearer ${token}x` });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.equal((await listTools(served.url, { authorization: "Basic YWxpY2U6eA==" })).status, 401);
    const client = await connect(served.url, token);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === "notify_ui"));
    } finally {
      await client.close();
    }
  });

  test("a token file made unsafe while serving refuses every request with 500, and says why on stderr", async () => {
    const path = `${dir}/tokens.json`;
    await chmod(path, 0o644);
    try {
      const response = await listTools(served.url, { authorization: `Bearer ${token}` });
      assert.equal(response.status, 500);
      assert.doesNotMatch(await response.text(), /chmod|tokens\.json/, "the caller learns nothing of the file");
      assert.match(served.stderr(), /tokens\.json can be read or written by others \(mode 644\): run "chmod 600 /);
    } finally {
      await chmod(path, 0o600);
    }
    assert.equal((await listTools(served.url, { authorization: `Bearer ${token}` })).status, 200);
  });

  test("a Host other than localhost and the public URL's is refused, even with a good token", async () => {
    assert.equal(await listToolsAs(served.url, "evil.example", { authorization: `Bearer ${token}` }), 403);
    assert.equal(await listToolsAs(served.url, `localhost:${served.url.port}`, { authorization: `Bearer ${token}` }), 200);
  });
});

describe("--auth oauth against a real issuer", () => {
  let issuer: TestIssuer;
  let issuerUrl: string;
  let dir: string;
  let cleanup: () => Promise<void>;
  let served: Served;
  let sign: (claims: Record<string, unknown>) => Promise<string>;
  let foreign: (claims: Record<string, unknown>) => Promise<string>;
  // The audience every token must name. Host checks ignore the port, so the server may listen on any.
  const publicUrl = "http://127.0.0.1/mcp";

  before(async () => {
    issuer = await startTestIssuer();
    ({ url: issuerUrl, sign, signForeign: foreign } = issuer);
    ({ dir, cleanup } = await tempDataDir());
    served = await serveHttp(["--auth", "oauth", "--issuer", issuerUrl, "--public-url", publicUrl], { BACKCHANNEL_HOME: dir });
  });
  after(async () => {
    served.process.kill();
    issuer.close();
    await cleanup();
  });

  const claims = (extra: Record<string, unknown> = {}) => ({
    iss: issuerUrl,
    aud: publicUrl,
    sub: "user-42",
    scope: "openid backchannel",
    exp: Math.floor(Date.now() / 1000) + 600,
    ...extra,
  });

  test("a token of the issuer, for this server, with the scope, is served; the metadata names the issuer", async () => {
    const client = await connect(served.url, await sign(claims()));
    try {
      assert.ok((await client.listTools()).tools.length > 0);
    } finally {
      await client.close();
    }
    const metadata = await (await fetch(new URL("/.well-known/oauth-protected-resource/mcp", served.url))).json();
    assert.deepEqual(metadata, {
      resource: publicUrl,
      authorization_servers: [issuerUrl],
      scopes_supported: ["backchannel"],
      bearer_methods_supported: ["header"],
      resource_name: "backchannel",
    });
  });

  test("--jwks-url names the keys of an issuer that publishes no metadata", async () => {
    const { dir: other, cleanup: done } = await tempDataDir();
    const bare = "https://issuer.invalid";
    const keyed = await serveHttp(["--auth", "oauth", "--issuer", bare, "--jwks-url", `${issuerUrl}/jwks`, "--public-url", publicUrl], {
      BACKCHANNEL_HOME: other,
    });
    try {
      assert.equal((await listTools(keyed.url, { authorization: `Bearer ${await sign(claims({ iss: bare }))}` })).status, 200);
      assert.equal((await listTools(keyed.url, { authorization: `Bearer ${await sign(claims())}` })).status, 401, "the issuer must still match");
    } finally {
      keyed.process.kill();
      await done();
    }
  });

  test("a token without the scope gets 403 insufficient_scope", async () => {
    const response = await listTools(served.url, { authorization: `Bearer ${await sign(claims({ scope: "openid" }))}` });
    assert.equal(response.status, 403);
    const challenge = response.headers.get("www-authenticate") ?? "";
    assert.match(challenge, /error="insufficient_scope"/);
    assert.match(challenge, /scope="backchannel"/);
    assert.ok(challenge.includes('resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"'), challenge);
  });

  test("expired, another audience, another issuer, another key: 401 invalid_token, saying which", async () => {
    const cases: [string, Promise<string>, RegExp][] = [
      ["expired", sign(claims({ exp: Math.floor(Date.now() / 1000) - 60 })), /expired/],
      ["another audience", sign(claims({ aud: "https://other.example/mcp" })), /aud claim/],
      ["another issuer", sign(claims({ iss: "https://evil.example" })), /iss claim/],
      ["another key", foreign(claims()), /not signed by the issuer/],
      ["not a JWT", Promise.resolve("bc_not-a-jwt"), /not a valid access token/],
      ...[[""], [42], [["user-42"]], [{ id: "user-42" }], [null]].map(([sub]): [string, Promise<string>, RegExp] => [
        `sub ${JSON.stringify(sub)}`,
        sign(claims({ sub })),
        /sub claim/,
      ]),
    ];
    for (const [what, token, reason] of cases) {
      const response = await listTools(served.url, { authorization: `Bearer ${await token}` });
      assert.equal(response.status, 401, what);
      const challenge = response.headers.get("www-authenticate") ?? "";
      assert.match(challenge, /error="invalid_token"/, what);
      assert.match(challenge, reason, what);
    }
  });
});

describe("--auth oauth with an issuer whose keys cannot be found", () => {
  /** An issuer that counts what it is asked, and answers `answer` (metadata naming its own JWKS, else 404). */
  async function issuerThatFails(answer: (path: string, url: string) => [number, string]) {
    let asked = 0;
    let url = "";
    const server = createServer((req, res) => {
      asked++;
      const [status, body] = answer(req.url ?? "", url);
      res.writeHead(status, { "content-type": "application/json" }).end(body);
    });
    url = (await listen(server)).href.replace(/\/$/, "");
    return { url, asked: () => asked, close: () => server.close() };
  }

  /** A server of `issuerUrl`'s tokens, 20 requests at once with `token`: their statuses and Retry-After headers. */
  async function twentyAtOnce(issuerUrl: string, token: (issuer: string) => Promise<string>) {
    const { dir, cleanup } = await tempDataDir();
    const served = await serveHttp(["--auth", "oauth", "--issuer", issuerUrl, "--public-url", "http://127.0.0.1/mcp"], { BACKCHANNEL_HOME: dir });
    try {
      const bearer = await token(issuerUrl);
      const responses = await Promise.all(Array.from({ length: 20 }, () => listTools(served.url, { authorization: `Bearer ${bearer}` })));
      return {
        statuses: responses.map((response) => response.status),
        retryAfter: responses.map((response) => response.headers.get("retry-after")),
        challenges: responses.map((response) => response.headers.get("www-authenticate") ?? ""),
        bodies: await Promise.all(responses.map((response) => response.text())),
        stderr: served.stderr(),
      };
    } finally {
      served.process.kill();
      await cleanup();
    }
  }

  const signer = startTestIssuer();
  after(async () => (await signer).close());
  const signedFor = async (issuer: string) =>
    (await signer).sign({ iss: issuer, sub: "x", scope: "backchannel", exp: Math.floor(Date.now() / 1000) + 60 });

  test("a token that is not a JWT gets 401 invalid_token without a request to the issuer, even while the issuer cannot be reached", async () => {
    const issuer = await issuerThatFails(() => [404, "{}"]);
    try {
      for (const junk of ["bc_not-a-jwt", "a.b.c", "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln", "x".repeat(4000)]) {
        const { statuses, challenges } = await twentyAtOnce(issuer.url, async () => junk);
        assert.deepEqual(new Set(statuses), new Set([401]), `${junk.slice(0, 40)}: ${statuses}`);
        assert.ok(
          challenges.every((challenge) => /error="invalid_token"/.test(challenge)),
          challenges[0],
        );
      }
      assert.equal(issuer.asked(), 0, "the issuer was asked for a token that cannot be one of its own");
    } finally {
      issuer.close();
    }
  });

  test("a JWT while the issuer's metadata cannot be had: 503 with Retry-After for each request, the issuer asked once", async () => {
    const issuer = await issuerThatFails(() => [404, "{}"]);
    try {
      const { statuses, retryAfter, bodies, stderr } = await twentyAtOnce(issuer.url, signedFor);
      assert.deepEqual(new Set(statuses), new Set([503]), String(statuses));
      for (const value of retryAfter) assert.ok(Number(value) >= 1 && Number(value) <= 30, `Retry-After ${value}`);
      assert.match(bodies[0]!, /"error":"temporarily_unavailable"/);
      assert.match(bodies[0]!, /could not get the signing keys of the token's issuer; try again in \d+ s/);
      assert.match(
        stderr,
        /could not find the signing keys of http:\/\/127\.0\.0\.1:\d+: neither its OAuth nor its OpenID metadata names a jwks_uri; pass --jwks-url/,
      );
      // One discovery tries the two metadata documents.
      assert.ok(issuer.asked() <= 2, `the issuer was asked ${issuer.asked()} times for 20 requests`);
    } finally {
      issuer.close();
    }
  });

  test("a JWT while the issuer's key set cannot be fetched: 503 with Retry-After, the key set asked once", async () => {
    const issuer = await issuerThatFails((path, url) =>
      path === "/.well-known/oauth-authorization-server" ? [200, JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` })] : [500, "{}"],
    );
    try {
      const { statuses, retryAfter } = await twentyAtOnce(issuer.url, signedFor);
      assert.deepEqual(new Set(statuses), new Set([503]), String(statuses));
      assert.ok(
        retryAfter.every((value) => Number(value) >= 1),
        String(retryAfter),
      );
      assert.ok(issuer.asked() <= 2, `the issuer was asked ${issuer.asked()} times for 20 requests`);
    } finally {
      issuer.close();
    }
  });

  test("an issuer nobody listens for: a junk token 401, a JWT 503", async () => {
    const closed = createServer();
    const url = (await listen(closed)).href.replace(/\/$/, "");
    closed.close();
    assert.deepEqual(new Set((await twentyAtOnce(url, async () => "bc_not-a-jwt")).statuses), new Set([401]));
    assert.deepEqual(new Set((await twentyAtOnce(url, signedFor)).statuses), new Set([503]));
  });
});

for (const kind of storeKinds()) {
  describe(`principals on the ${kind.name} store`, { skip: kind.skip }, () => {
    let fixture: StoreFixture;
    let served: Served;
    let tokens: string;
    let alice: Client;
    let bob: Client;
    let carol: Client;
    let dave: Client;
    let erin: Client;
    let frank: Client;
    let aliceToken: string;
    let bobToken: string;

    before(async () => {
      fixture = await kind.start();
      tokens = `${fixture.dataDir}/tokens.json`;
      aliceToken = addToken(tokens, "alice");
      bobToken = addToken(tokens, "bob");
      const carolToken = addToken(tokens, "carol");
      const daveToken = addToken(tokens, "dave");
      const erinToken = addToken(tokens, "erin");
      const frankToken = addToken(tokens, "frank");
      served = await serveHttp(["--auth", "tokens", "--tokens", tokens], {
        ...fixture.env,
        BACKCHANNEL_MAX_PRINCIPAL_CHANNELS: "3",
        BACKCHANNEL_MAX_PRINCIPAL_APPENDS_PER_MINUTE: "8",
        BACKCHANNEL_MAX_PRINCIPAL_BYTES: "20000",
      });
      alice = await connect(served.url, aliceToken);
      bob = await connect(served.url, bobToken);
      carol = await connect(served.url, carolToken);
      dave = await connect(served.url, daveToken);
      erin = await connect(served.url, erinToken);
      frank = await connect(served.url, frankToken);
    });
    after(async () => {
      await alice?.close();
      await bob?.close();
      await carol?.close();
      await dave?.close();
      await erin?.close();
      await frank?.close();
      served?.process.kill();
      await fixture?.stop();
    });

    test("another principal's channel is, for every tool, exactly a channel that does not exist", async () => {
      const opened = await alice.callTool({ name: "open_reader", arguments: { title: "Notes", markdown: "# Notes\n\nA private paragraph." } });
      assert.notEqual(opened.isError, true, JSON.stringify(opened.content));
      const channel = (opened.structuredContent as { channel_id: string }).channel_id;
      assert.match(await call(alice, "notify_agent", { channel_id: channel, event: "ask", data: { text: "secret question" } }), /"seq":1/);
      assert.match(await call(alice, "notify_ui", { channel_id: channel, event: "answer", data: { text: "secret answer" } }), /"seq":1/);

      // Bob on Alice's channel, and Bob on a channel nobody made: the same answers, word for word.
      const fresh = "nobody-made-this-channel";
      const probes: [string, Record<string, unknown>][] = [
        ["reader_state", {}],
        ["poll_agent_messages", {}],
        ["poll_agent_messages", { after: 0 }],
        ["poll_ui_messages", { after: 0 }],
        ["app_state", {}],
      ];
      for (const [tool, args] of probes) {
        const onTheirs = await call(bob, tool, { channel_id: channel, ...args });
        const onNone = await call(bob, tool, { channel_id: fresh, ...args }, [fresh, channel]);
        assert.equal(onTheirs, onNone, `${tool} tells Alice's channel from none`);
        assert.doesNotMatch(onTheirs, /secret|private paragraph/);
      }
      // Bob's notify lands in a channel of his own that has Alice's id.
      const notified = await call(bob, "notify_agent", { channel_id: channel, event: "ask", data: { text: "bob's" } });
      assert.equal(
        notified,
        await call(bob, "notify_agent", { channel_id: `${fresh}-2`, event: "ask", data: { text: "bob's" } }, [`${fresh}-2`, channel]),
      );

      // Alice's channel is as she left it.
      const hers = JSON.parse(await call(alice, "poll_agent_messages", { channel_id: channel, after: 0 })) as {
        structured: { messages: { data: unknown }[] };
      };
      assert.deepEqual(
        hers.structured.messages.map((message) => message.data),
        [{ text: "secret question" }],
      );
      const state = await call(alice, "reader_state", { channel_id: channel });
      assert.match(state, /private paragraph/);
      // The same holds in the 2026-07-28 protocol, whose requests reach the server by another path.
      const [aliceModern, bobModern] = await Promise.all([connect(served.url, aliceToken, true), connect(served.url, bobToken, true)]);
      try {
        assert.match(await call(aliceModern, "reader_state", { channel_id: channel }), /private paragraph/);
        assert.equal(
          await call(bobModern, "reader_state", { channel_id: channel }),
          await call(bobModern, "reader_state", { channel_id: fresh }, [fresh, channel]),
        );
      } finally {
        await aliceModern.close();
        await bobModern.close();
      }

      // Alice's data is under her namespace, and nothing of it under the store's own names.
      const namespace = createHash("sha256").update("alice").digest("hex").slice(0, 32);
      const contents = await fixture.contents();
      const mine = fixture.kind === "file" ? `principals/${namespace}/channels/${channel}` : `bc:p:${namespace}:{${channel}}:meta`;
      assert.ok(contents.includes(mine), `${mine} in ${contents.join(", ")}`);
      assert.ok(!contents.some((entry) => entry === `channels/${channel}` || entry === `bc:{${channel}}:meta`), contents.join(", "));
    });

    test("limits per principal: channels, appends per minute and bytes refuse with which limit and when to retry", async () => {
      for (const channel of ["c-1", "c-2", "c-3"]) assert.match(await call(carol, "notify_ui", { channel_id: channel, event: "x" }), /"seq":1/);
      const refused = await call(carol, "notify_ui", { channel_id: "c-4", event: "x" });
      assert.match(refused, /"isError":true/);
      assert.match(refused, /at most 3 channels \(the channels limit\)\. Nothing was changed/);
      // Others are not held by Carol's count.
      assert.match(await call(dave, "notify_ui", { channel_id: "c-4", event: "x" }), /"seq":1/);

      // Appends: Carol made 3; 5 more reach 8.
      for (let i = 0; i < 5; i++) assert.match(await call(carol, "notify_ui", { channel_id: "c-1", event: "x" }), /"isError":false/);
      const tooFast = await call(carol, "notify_ui", { channel_id: "c-1", event: "x" });
      assert.match(
        tooFast,
        /at most 8 messages per minute \(the appends limit\)\. Nothing was changed\. Send fewer, larger messages\. Try again in \d+ s\./,
      );

      // Bytes: Dave's channel takes what fits, then refuses; reading (a cursor past the messages deletes them) frees room.
      const big = { text: "x".repeat(9000) };
      for (let i = 0; i < 2; i++) assert.match(await call(dave, "notify_ui", { channel_id: "c-4", event: "big", data: big }), /"isError":false/);
      const tooBig = await call(dave, "notify_ui", { channel_id: "c-4", event: "big", data: big });
      assert.match(tooBig, /at most 20000 bytes of queued messages and state \(the bytes limit\)\. Nothing was changed\. Read the messages/);
      // Reading frees room, seen once the count is read again (on an injected clock: unit/remote-auth.test.ts).
      assert.match(await call(dave, "poll_ui_messages", { channel_id: "c-4", after: 3 }), /"isError":false/);
    });

    test("state documents count against the bytes limit: documents that together pass it are refused", async () => {
      // About 9,000 bytes of document each: two fit in 20,000 bytes, a third does not.
      const document = "word ".repeat(1800);
      const opened: string[] = [];
      for (const channel of ["doc-1", "doc-2", "doc-3"]) opened.push(await call(erin, "open_reader", { channel_id: channel, markdown: document }));
      assert.match(opened[0]!, /"isError":false/);
      assert.match(opened[1]!, /"isError":false/);
      assert.match(opened[2]!, /at most 20000 bytes of queued messages and state \(the bytes limit\)\. Nothing was changed/);
      assert.match(await call(erin, "reader_state", { channel_id: "doc-3" }), /"document":null/, "the refused document was not stored");
      // A document replaced by one of the same size adds nothing.
      assert.match(await call(erin, "open_reader", { channel_id: "doc-1", markdown: document }), /"isError":false/);
    });

    test("saved apps count against the bytes limit", async () => {
      // The open app (a state document) and each saved copy take about 6,000 bytes: the third copy does not fit in 20,000.
      const html = `<p>${"x".repeat(6000)}</p>`;
      assert.match(await call(frank, "open_app", { channel_id: "app-1", title: "Big", html }), /"isError":false/);
      for (const name of ["one", "two"]) {
        assert.match(await call(frank, "save_app", { channel_id: "app-1", name, description: "A big app." }), /"isError":false/, name);
      }
      const refused = await call(frank, "save_app", { channel_id: "app-1", name: "three", description: "A big app." });
      assert.match(refused, /at most 20000 bytes of queued messages and state \(the bytes limit\)\. Nothing was changed/);
      assert.match(await call(frank, "open_app", { name: "three" }), /"isError":true/, "the refused app was not saved");
      // Saving over an app with one of the same size adds nothing.
      assert.match(await call(frank, "save_app", { channel_id: "app-1", name: "two", description: "A big app." }), /"isError":false/);
    });
  });
}

for (const kind of storeKinds()) {
  describe(`principals' views of the ${kind.name} store`, { skip: kind.skip }, () => {
    test("each view has its own channels and sessions; the store lists the principals for the sweep", async () => {
      const fixture = await kind.start();
      try {
        const store = fixture.open();
        const [a, b] = [createHash("sha256").update("a").digest("hex").slice(0, 32), createHash("sha256").update("b").digest("hex").slice(0, 32)];
        const viewA = store.forPrincipal(a);
        const viewB = store.forPrincipal(b);
        await viewA.append("same-id", "agent", "ask", { text: "of a" });
        await viewA.sessions.update("pid-1-00000000000000000001", (record) => ({
          ...record,
          wall: { text: "a's wall", until: new Date(Date.now() + 60_000).toISOString(), posted_at: new Date().toISOString() },
        }));
        await store.append("same-id", "agent", "ask", { text: "of the store" });
        assert.deepEqual((await viewB.peek("same-id", "agent")).length, 0);
        assert.deepEqual(
          (await viewA.peek("same-id", "agent")).map((message) => message.data),
          [{ text: "of a" }],
        );
        assert.deepEqual(
          (await store.peek("same-id", "agent")).map((message) => message.data),
          [{ text: "of the store" }],
        );
        assert.equal((await viewA.sessions.read("pid-1-00000000000000000001")).wall?.text, "a's wall");
        assert.equal((await viewB.sessions.read("pid-1-00000000000000000001")).wall, null);
        assert.equal((await store.sessions.read("pid-1-00000000000000000001")).wall, null);
        assert.deepEqual(
          (await viewA.listChannels()).map((channel) => channel.id),
          ["same-id"],
        );
        assert.deepEqual(await viewB.listChannels(), []);
        assert.deepEqual(
          (await store.listChannels()).map((channel) => channel.id),
          ["same-id"],
        );
        // A principal is in the store once it wrote: a view makes nothing by being made.
        const principals = await store.listPrincipals();
        assert.ok(principals.includes(a) && principals.every((namespace) => namespace === a || namespace === b), principals.join());
        // Both stores count a message as its record (the file store's log line); Redis's count may differ by a byte or two.
        const record = Buffer.byteLength(JSON.stringify((await viewA.peek("same-id", "agent"))[0]));
        assert.ok(Math.abs((await viewA.usedBytes()) - record) <= 4, `${await viewA.usedBytes()} for a record of ${record}`);
        assert.equal(await viewB.usedBytes(), 0);
        assert.throws(() => store.forPrincipal("../../etc"), /invalid principal namespace/);
      } finally {
        await fixture.stop();
      }
    });
  });
}
