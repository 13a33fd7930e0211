/// <reference lib="dom" />
/**
 * Nobody but the person gets into the browser host (web/gate.ts, SECURITY.md "The
 * browser host"), through the real host, the real playground and Chromium:
 *
 * - the link's key is exchanged for a session (an HttpOnly, SameSite=Strict cookie
 *   valid under the session's path only), and leaves the address bar;
 * - without it nothing is read, written or detected: every refusal is the same 403;
 * - a foreign Host header (DNS rebinding) and a foreign Origin are refused on every
 *   route, the session's cookie notwithstanding;
 * - a hostile page of another 127.0.0.1 port, in the person's own browser after they
 *   opened the link, and knowing the session's address: it cannot call the endpoint,
 *   open the page on a channel of its choosing (the playground's agent panel took a
 *   real agent's waiting question so), frame it, probe it, or receive its cookie;
 * - another user of the machine reads neither the key nor the host's record, and is
 *   refused without them;
 * - the page's content security policy and frame protection; the playground listens
 *   on 127.0.0.1 only.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmod } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { startWeb, type WebProcess } from "./support/browser-host.js";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, CLI, connectServer, openBrowserLink, structured, tempDataDir } from "./support/helpers.js";
import { otherUserSkipReason, shellAsOtherUser } from "./support/other-user.js";

const skip = browserSkipReason();

/** The one refusal every route gives. */
interface Answer {
  status: number;
  body: string;
  type: string | undefined;
}

/** A raw HTTP request to 127.0.0.1:`port` with exactly these headers (fetch would set Host and Origin itself). */
function raw(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, setHost: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, type: res.headers["content-type"] }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A tools/call of `name` as JSON-RPC, for the MCP endpoint. */
function toolCall(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
}

describe("the browser host lets nobody else in", { skip, timeout: 240_000 }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let agent: Client;
  let host: WebProcess;
  let playground: WebProcess;
  let browser: Browser;
  /** The person's browser, after they opened the host's link: it holds the session's cookie. */
  let person: BrowserContext;
  let channelId: string;
  /** The session the person's link opened: its address (e.g. `http://127.0.0.1:P/s/<id>/`) and its cookie. */
  let session: URL;
  let cookie: string;
  let hostile: Server;
  /** What the hostile page's own server received: every Cookie header. */
  const hostileCookies: string[] = [];

  /** The questions waiting for the agent on the channel, looked at without taking them. */
  const waitingAsks = async () =>
    structured<{ messages: { event: string }[] }>(
      (await agent.callTool({ name: "watch_agent_messages", arguments: { channel_id: channelId } })) as CallToolResult,
    ).messages.filter((message) => message.event === "ask").length;

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    // The data directory itself is reachable by others, as a home folder often is: what keeps them out is below it.
    await chmod(dataDir, 0o755);
    agent = await connectServer(dataDir);
    channelId = structured<{ channel_id: string }>(
      (await agent.callTool({
        name: "open_reader",
        arguments: { title: "Secret plans", markdown: "# Secret plans\n\nNobody else may read this." },
      })) as CallToolResult,
    ).channel_id;
    // A question waits for the real agent, as one did when a hostile page took it.
    const ask = { thread_id: "t-1", quote: "Nobody", paragraph: "Nobody else may read this.", question: "Who may read it?", history: [] };
    structured((await agent.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data: ask } })) as CallToolResult);
    host = await startWeb({ BACKCHANNEL_HOME: dataDir });
    // The playground on the agent's data directory, as its docs suggest for showing a real agent's channel.
    playground = await startWeb({}, ["--playground", "--port", "0", "--home", dataDir]);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    person = await browser.newContext();
    const page = await person.newPage();
    await page.goto(`${host.link.href}#${channelId}`);
    await page.locator("#frame iframe").waitFor();
    session = new URL(page.url());
    session.hash = "";
    const [sessionCookie] = await person.cookies(session.href);
    cookie = `${sessionCookie!.name}=${sessionCookie!.value}`;
    await page.close();
    hostile = createServer((req, res) => {
      hostileCookies.push(req.headers.cookie ?? "");
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>A page of another site</title><body>hello</body>");
    });
    await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
  });

  after(async () => {
    await browser?.close();
    await Promise.all([host?.stop(), playground?.stop()]);
    await agent?.close();
    hostile?.close();
    await cleanup?.();
  });

  test("the link's key becomes an HttpOnly, SameSite=Strict cookie of the session's path, and leaves the address bar", async () => {
    const page = await person.newPage();
    try {
      await page.goto(`${host.link.href}#${channelId}`);
      const frame = await (await page.locator("#frame iframe").elementHandle())!.contentFrame();
      await frame!.locator("#doc", { hasText: "Nobody else may read this." }).waitFor();
      const url = new URL(page.url());
      assert.equal(url.searchParams.get("k"), null, "the key is gone from the address bar");
      assert.match(url.pathname, /^\/s\/[A-Za-z0-9_-]{22}\/$/);
      assert.equal(url.hash, `#${channelId}`, "the channel stays");
      const cookies = await person.cookies(url.href);
      const own = cookies.find((each) => each.path === url.pathname);
      assert.ok(own, "a cookie of the session's path");
      assert.equal(own.httpOnly, true);
      assert.equal(own.sameSite, "Strict");
      assert.ok(own.expires < 0, "a session cookie, gone with the browser");
      assert.doesNotMatch(JSON.stringify(cookies), new RegExp(host.link.searchParams.get("k")!), "the key itself is kept nowhere");
    } finally {
      await page.close();
    }
  });

  test("without the key or the session's cookie, every route gives the same 403, whatever is behind it", async () => {
    const port = Number(host.link.port);
    const own = { host: `127.0.0.1:${port}` };
    const fakeSession = "/s/AAAAAAAAAAAAAAAAAAAAAA/";
    const answers = await Promise.all([
      raw(port, "GET", "/", own),
      raw(port, "GET", "/?k=not-the-key", own),
      raw(port, "GET", `/?k=${nearKey(host.link.searchParams.get("k")!)}`, own),
      raw(port, "GET", session.pathname, own),
      raw(port, "GET", `${session.pathname}channels`, own),
      raw(port, "GET", `${fakeSession}channels`, own),
      raw(port, "GET", `${session.pathname}frame`, own),
      raw(port, "GET", `${session.pathname}frame/ahead`, own),
      raw(port, "GET", `${session.pathname}frame/ahead?channel=${channelId}`, own),
      raw(
        port,
        "POST",
        `${session.pathname}mcp`,
        { ...own, "content-type": "application/json" },
        toolCall("poll_agent_messages", { channel_id: channelId }),
      ),
      raw(port, "GET", `${session.pathname}channels`, { ...own, cookie: `${cookie.split("=")[0]}=${"A".repeat(43)}` }),
      raw(port, "GET", `${fakeSession}channels`, { ...own, cookie }),
      raw(port, "GET", "/nothing-here", own),
    ]);
    for (const answer of answers) assert.deepEqual(answer, answers[0]);
    assert.equal(answers[0]!.status, 403);
    assert.doesNotMatch(answers[0]!.body, /backchannel|channel|Secret/i, "the refusal names nothing");
    assert.equal(await waitingAsks(), 1, "nothing was taken");
  });

  test("a foreign Host (DNS rebinding) and a foreign Origin are refused on every route, the session's cookie notwithstanding", async () => {
    const port = Number(host.link.port);
    const own = { host: `127.0.0.1:${port}`, cookie };
    const key = host.link.searchParams.get("k")!;
    const routes: [string, string, string | undefined][] = [
      ["GET", `/?k=${key}`, undefined],
      ["GET", session.pathname, undefined],
      ["GET", `${session.pathname}channels`, undefined],
      ["GET", `${session.pathname}frame`, undefined],
      ["GET", `${session.pathname}frame/ahead`, undefined],
      ["GET", `${session.pathname}frame/ahead?channel=${channelId}`, undefined],
      ["POST", `${session.pathname}mcp`, toolCall("poll_agent_messages", { channel_id: channelId })],
    ];
    const hostilePort = (hostile.address() as AddressInfo).port;
    for (const [method, path, body] of routes) {
      const json: Record<string, string> = body ? { "content-type": "application/json", accept: "application/json, text/event-stream" } : {};
      assert.notEqual((await raw(port, method, path, { ...own, ...json }, body)).status, 403, `${method} ${path} is served to the person`);
      for (const headers of [
        { ...own, host: `rebound.example:${port}` },
        { ...own, host: `127.0.0.1:${hostilePort}` },
        { ...own, origin: `http://127.0.0.1:${hostilePort}` },
        { ...own, origin: "http://rebound.example" },
        { ...own, origin: "null" },
      ]) {
        const answer = await raw(port, method, path, { ...headers, ...json }, body);
        assert.equal(answer.status, 403, `${method} ${path} with ${JSON.stringify(headers)}`);
      }
    }
    // The person's own poll above (served) read the ask and cleared it: put one back for the hostile page's tests.
    const ask = { thread_id: "t-2", quote: "Nobody", paragraph: "Nobody else may read this.", question: "Still secret?", history: [] };
    structured((await agent.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data: ask } })) as CallToolResult);
  });

  test("a hostile page on another 127.0.0.1 port, in the person's browser, knowing the session's address, gets nothing", async () => {
    const page = await person.newPage();
    const hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/`;
    try {
      await page.goto(hostileUrl);
      const playgroundSession = await openPlaygroundSession();
      const attempts = await page.evaluate(
        async ({ session, playgroundSession, channelId, call }) => {
          const outcome = async (attempt: () => Promise<unknown>) => {
            try {
              return `read: ${JSON.stringify(await attempt()).slice(0, 200)}`;
            } catch (error) {
              return `failed: ${(error as Error).name}`;
            }
          };
          const results: Record<string, string> = {};
          // A call with its body as text/plain needs no preflight: the browser sends it, with the cookie; the reply is opaque.
          results.simplePost = await outcome(() =>
            fetch(`${session}mcp`, {
              method: "POST",
              mode: "no-cors",
              credentials: "include",
              headers: { "content-type": "text/plain" },
              body: call,
            }).then((response) => response.type),
          );
          results.corsPost = await outcome(() =>
            fetch(`${session}mcp`, {
              method: "POST",
              credentials: "include",
              headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
              body: call,
            }).then((response) => response.text()),
          );
          results.channels = await outcome(() => fetch(`${session}channels`, { credentials: "include" }).then((response) => response.text()));
          // Probes by image and script: does this path exist? Both answer alike.
          const probe = (tag: "img" | "script", src: string) =>
            new Promise<string>((resolve) => {
              const element = document.createElement(tag);
              element.onload = () => resolve("loaded");
              element.onerror = () => resolve("error");
              element.setAttribute("src", src);
              document.body.append(element);
            });
          results.probes = JSON.stringify([
            await probe("img", `${session}channels`),
            await probe("img", `${session.replace(/\/s\/[^/]+\//, "/s/AAAAAAAAAAAAAAAAAAAAAA/")}channels`),
            await probe("script", `${session}channels`),
            await probe("script", `${session}mcp`),
          ]);
          // Opening the pages on the channel of its choosing: the host's, and the playground's with its agent panel.
          window.open(`${session}#${channelId}`, "_blank");
          window.open(`${playgroundSession}#${channelId}`, "_blank");
          // Framing it.
          const frame = document.createElement("iframe");
          frame.src = `${session}#${channelId}`;
          document.body.append(frame);
          await new Promise((resolve) => (frame.onload = resolve));
          return results;
        },
        { session: session.href, playgroundSession, channelId, call: toolCall("poll_agent_messages", { channel_id: channelId }) },
      );
      // Sent, with the cookie, but refused by the server (see below), and its reply unreadable (the host's resource policy makes it an error).
      assert.equal(attempts.simplePost, "failed: TypeError");
      assert.equal(attempts.corsPost, "failed: TypeError");
      assert.equal(attempts.channels, "failed: TypeError");
      assert.equal(attempts.probes, JSON.stringify(["error", "error", "error", "error"]), "nothing tells an existing path from a made-up one");
      // The windows it opened show the refusal, never the page: no agent panel started, no frame of the host framed.
      await waitForPages(person, 3);
      for (const opened of person.pages().filter((each) => each !== page)) {
        await opened.waitForLoadState();
        assert.match(await opened.content(), /Forbidden/, opened.url());
        assert.equal(await opened.locator("#frame").count(), 0);
        await opened.close();
      }
      for (const frame of page.frames().filter((each) => each !== page.mainFrame()))
        assert.equal(await frame.locator("#frame").count(), 0, "not framed");
      assert.equal(await waitingAsks(), 1, "the agent's waiting question is still there");
      assert.ok(
        hostileCookies.every((value) => !value.includes(cookie.split("=")[0]!)),
        `the hostile page's server never received the session's cookie: ${hostileCookies}`,
      );
    } finally {
      await page.close();
    }
  });

  test("the page and its app frame: a strict content security policy, and no framing by another page", async () => {
    const { page, session: own, cookie: ownCookie } = await openBrowserLink(host.link.href);
    const policy = page.headers.get("content-security-policy") ?? "";
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /script-src 'sha256-[A-Za-z0-9+/=]+'(;| 'sha256)/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|\*/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.equal(page.headers.get("x-frame-options"), "DENY");
    assert.equal(page.headers.get("cross-origin-opener-policy"), "same-origin");
    // The frame apps are posted into, and the one the page's first script loads the reader in (with a channel's state, or without).
    for (const path of ["frame", "frame/ahead", `frame/ahead?channel=${channelId}`]) {
      const frame = await fetch(new URL(path, own), { headers: { cookie: ownCookie, "sec-fetch-site": "same-origin", "sec-fetch-dest": "iframe" } });
      assert.equal(frame.status, 200, path);
      assert.match(frame.headers.get("content-security-policy") ?? "", /connect-src 'none'.*frame-ancestors 'self'; sandbox allow-scripts/, path);
      assert.equal(frame.headers.get("x-frame-options"), "SAMEORIGIN", path);
    }
  });

  test("the reader's frame carries the state of the channel it names, and nothing in a document becomes markup in it", async () => {
    const hostileText = "</script><script>parent.stolen = 1</script><!-- </article> \u2028 & <b>bold?</b>";
    const { channel_id: hostileId, title } = structured<{ channel_id: string; title: string }>(
      (await agent.callTool({
        name: "open_reader",
        arguments: { title: hostileText, markdown: `# ${hostileText}\n\n${hostileText}` },
      })) as CallToolResult,
    );
    const frame = async (query: string) => {
      const answer = await fetch(new URL(`frame/ahead${query}`, session), {
        headers: { cookie, "sec-fetch-site": "same-origin", "sec-fetch-dest": "iframe" },
      });
      assert.equal(answer.status, 200, query);
      return answer.text();
    };
    const plain = await frame("");
    const scripts = (html: string) => html.match(/<script\b/g)?.length ?? 0;
    // A channel id that is not one, or names no channel: the reader as it is, which then asks for its state itself.
    for (const query of [
      "?channel=..%2F..%2Fetc",
      "?channel=%00",
      `?channel=${"a".repeat(10_000)}`,
      "?channel=nothing-here",
      "?channel=",
      "?channel=a&channel=b",
    ])
      assert.equal(await frame(query), plain, query);
    const withState = await frame(`?channel=${hostileId}`);
    assert.equal(scripts(withState), scripts(plain) + 1, "one element more, the state's, and no script of the document's");
    const json = /<script type="application\/json" id="reader-ahead-state">([^<]*)<\/script>/.exec(withState)?.[1];
    assert.ok(json, "the state is in the frame");
    const state = JSON.parse(json) as { channel_id: string; document: { title: string; text?: string } };
    assert.match(title, /<\/script><script>parent\.stolen = 1<\/script><!--/, "the title kept its markup as text");
    assert.deepEqual([state.channel_id, state.document.title, state.document.text], [hostileId, title, undefined]);
    assert.doesNotMatch(withState, /<b>bold\?<\/b>|parent\.stolen = 1<\/script>/, "the document's markup is text");
    assert.match(withState, /&lt;b&gt;bold\?&lt;\/b&gt;/);
    // And the other channel's state stays out of this one's frame.
    assert.doesNotMatch(await frame(`?channel=${channelId}`), /stolen/);
  });

  test("another user of the machine reads neither the key nor the host's record, and is refused without them", {
    skip: otherUserSkipReason(),
  }, () => {
    const read = shellAsOtherUser(
      `cat ${join(dataDir, "browser", "secret")} ${join(dataDir, "browser", "files.json")} 2>&1; ls ${join(dataDir, "browser")} 2>&1`,
    );
    assert.doesNotMatch(read.stdout, new RegExp(host.link.searchParams.get("k")!));
    assert.match(read.stdout, /Permission denied/);
    const port = host.link.port;
    const tried = shellAsOtherUser(
      `curl -s -o /dev/null -w '%{http_code} ' 'http://127.0.0.1:${port}/'; ` +
        `curl -s -o /dev/null -w '%{http_code} ' 'http://127.0.0.1:${port}${session.pathname}channels'; ` +
        `curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' --data '${toolCall("poll_agent_messages", { channel_id: channelId })}' 'http://127.0.0.1:${port}${session.pathname}mcp'`,
    );
    assert.equal(tried.stdout, "403 403 403");
  });

  test("the playground listens on 127.0.0.1 only: there is no option to listen elsewhere", () => {
    const result = shellLine([CLI, "web", "--playground", "--host", "0.0.0.0"]);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /unknown option --host/);
  });

  /** The playground's session, opened in the person's browser (they tried it on their data directory). */
  async function openPlaygroundSession(): Promise<string> {
    const page = await person.newPage();
    try {
      await page.goto(`${playground.link.href}`);
      await page.locator("#channel", { hasText: /^ch-/ }).waitFor();
      const url = new URL(page.url());
      return `${url.origin}${url.pathname}?agent=on`;
    } finally {
      await page.close();
    }
  }
});

/** `key` with its last character changed: a key that differs from it in one place. */
function nearKey(key: string): string {
  return `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`;
}

/** Resolves once `context` has `count` pages (the hostile page's windows open asynchronously). */
async function waitForPages(context: BrowserContext, count: number): Promise<void> {
  while (context.pages().length < count) await context.waitForEvent("page");
}

function shellLine(args: string[]) {
  return spawnSync(process.execPath, args, { encoding: "utf8" });
}
