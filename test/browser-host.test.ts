/**
 * The browser host's life (web/host.ts, server/browser-host.ts), through real
 * processes: started on demand by the first server whose client shows no apps, one
 * for the store even when servers ask at once, found again through its record, alive
 * after the server that started it is gone, ended when idle or when its data
 * directory is removed; what the person of a terminal agent sees when they open its
 * links (Chromium); `backchannel web` in the foreground, with the open channels and
 * their links; the same over a Redis store.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { chromium, type Page } from "playwright-core";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, CLI, connectServer, openBrowserLink, structured, tempDataDir } from "./support/helpers.js";
import { backgroundHosts, processEnded, startWeb, stopBrowserHost } from "./support/browser-host.js";
import { redisSkipReason, startRedis } from "./support/redis-server.js";

/** A client of a terminal agent: it shows no apps (it declares no MCP Apps extension). */
const TERMINAL = { capabilities: { roots: {} }, name: "claude-code" };

/** Opens a reader as `client`'s model; its reader_url. */
async function readerUrl(client: Client, title: string): Promise<{ url: URL; channelId: string }> {
  const opened = structured<{ channel_id: string; reader_url?: string }>(
    (await client.callTool({ name: "open_reader", arguments: { title, markdown: `# ${title}\n\nSome text.` } })) as CallToolResult,
  );
  assert.ok(opened.reader_url, "a client that shows no apps is given a link");
  return { url: new URL(opened.reader_url), channelId: opened.channel_id };
}

/** Runs `backchannel web ...args` to its end. */
function web(env: Record<string, string>, args: string[]) {
  return spawnSync(process.execPath, [CLI, "web", ...args], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
}

describe("the browser host, started on demand", { timeout: 180_000 }, () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) stopBrowserHost({ BACKCHANNEL_HOME: dir });
  });

  test("servers that need it at once start one between them; it outlives them, and the next server finds it", async () => {
    const { dir, cleanup } = await tempDataDir();
    dirs.push(dir);
    try {
      const servers = await Promise.all([1, 2, 3, 4].map(() => connectServer(dir, {}, TERMINAL)));
      const links = await Promise.all(servers.map((server, index) => readerUrl(server, `Doc ${index}`)));
      assert.equal(new Set(links.map((link) => link.url.origin)).size, 1, "one host for the store");
      assert.equal(new Set(links.map((link) => link.url.searchParams.get("k"))).size, 1, "one key");
      assert.deepEqual(backgroundHosts(dir).length, 1, "one host process started");
      const record = JSON.parse(readFileSync(join(dir, "browser", "files.json"), "utf8")) as { pid: number; url: string };
      assert.equal(record.url, `${links[0]!.url.origin}/`);
      assert.deepEqual(backgroundHosts(dir), [record.pid]);
      // The key is the user's alone.
      assert.equal(statSync(join(dir, "browser")).mode & 0o777, 0o700);
      assert.equal(statSync(join(dir, "browser", "secret")).mode & 0o777, 0o600);

      await Promise.all(servers.map((server) => server.close()));
      // Hosts restart their servers: the page still answers, and a new server finds the same host.
      assert.equal((await openBrowserLink(links[0]!.url.href)).page.status, 200);
      const later = await connectServer(dir, {}, TERMINAL);
      try {
        assert.equal((await readerUrl(later, "Later")).url.origin, links[0]!.url.origin);
        assert.deepEqual(backgroundHosts(dir), [record.pid]);
      } finally {
        await later.close();
      }
    } finally {
      stopBrowserHost({ BACKCHANNEL_HOME: dir });
      await cleanup();
    }
  });

  test("it ends when its data directory is removed", async () => {
    const { dir } = await tempDataDir();
    dirs.push(dir);
    const server = await connectServer(dir, {}, TERMINAL);
    await readerUrl(server, "Gone soon");
    await server.close();
    const [pid] = backgroundHosts(dir);
    assert.ok(pid);
    await rm(dir, { recursive: true, force: true });
    await processEnded(pid, 20_000);
  });

  test("it ends after its idle period with nothing in flight, and frees the store for the next", async () => {
    const { dir, cleanup } = await tempDataDir();
    try {
      const host = await startWeb({ BACKCHANNEL_HOME: dir }, ["--port", "0", "--idle-minutes", "0.05"]);
      assert.equal(await host.exited, 0);
      assert.match(web({ BACKCHANNEL_HOME: dir }, ["--list"]).stdout, /No browser host runs/);
    } finally {
      await cleanup();
    }
  });
});

describe("what a terminal agent's person sees", { skip: browserSkipReason(), timeout: 180_000 }, () => {
  test("the links of open_reader and open_app show the reader and the agent's app in the browser, and the person's events reach the agent", async () => {
    const { dir, cleanup } = await tempDataDir();
    const agent = await connectServer(dir, {}, { capabilities: { elicitation: {} }, name: "codex-mcp-client" });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      const reader = await readerUrl(agent, "For the browser");
      await page.goto(reader.url.href);
      const readerFrame = await (await page.locator("#frame iframe").elementHandle())!.contentFrame();
      await readerFrame!.locator("#doc", { hasText: "Some text." }).waitFor();
      assert.match(
        readerFrame!.url(),
        new RegExp(`/frame/ahead\\?channel=${reader.channelId}$`),
        "the page's first script loaded the reader's frame, ahead of the page's own script",
      );
      const opened = structured<{ channel_id: string; app_url: string }>(
        (await agent.callTool({
          name: "open_app",
          arguments: {
            title: "Counter",
            html: `<button id="plus">+1</button><script>plus.onclick = () => backchannel.send("plus", { by: 1 });</script>`,
          },
        })) as CallToolResult,
      );
      // The page starts the reader before it knows what a link's channel holds (web/page/app-frame.ts, mountAhead): on an
      // app's link it is never seen. The page's reading of the channel is held until the reader is in its frame, and looked at.
      let readerShown: Promise<boolean> | undefined;
      await page.route(/\/mcp$/, async (route) => {
        if (readerShown === undefined && /"reader_state"/.test(route.request().postData() ?? "")) {
          readerShown = readerVisible(page);
          await readerShown;
        }
        await route.continue();
      });
      await page.goto(opened.app_url);
      const appFrame = await (await page.locator('#frame iframe[title="Counter"]').elementHandle())!.contentFrame();
      await appFrame!.locator("#plus").click();
      assert.equal(await readerShown, false, "the reader, started ahead in its frame, is not seen on the app's link");
      assert.equal(await page.locator("#frame iframe").count(), 1, "only the app's frame is left");
      const events: string[] = [];
      while (!events.includes("plus")) {
        const polled = structured<{ messages: { event: string }[] }>(
          (await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: opened.channel_id, wait_ms: 20_000 } })) as CallToolResult,
        );
        assert.ok(polled.messages.length > 0, "the app's events reach the agent");
        events.push(...polled.messages.map((message) => message.event));
      }
      assert.deepEqual(events, ["ready", "plus"]);
    } finally {
      await browser.close();
      await agent.close();
      stopBrowserHost({ BACKCHANNEL_HOME: dir });
      await cleanup();
    }
  });
});

describe("the reader's frame, started ahead on a link", { skip: browserSkipReason(), timeout: 180_000 }, () => {
  test("holds the channel's document as the host rendered it, which the reader adopts: the same as the reader's own rendering", async () => {
    const { dir, cleanup } = await tempDataDir();
    const agent = await connectServer(dir, {}, TERMINAL);
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      // Long enough to be rendered in slices (more than three chunks), with every kind of block, and text that must stay text.
      const section = (index: number) =>
        `## Part ${index}\n\nA paragraph with *emphasis*, \`code\`, a [link](https://example.com) and <b>tags</b> & more.\n\n` +
        `| a | b |\n|---|---|\n| ${index} | two |\n\n\`\`\`\nconst x = ${index};\n\`\`\`\n\n- tight\n- list\n\n1. loose\n\n2. list\n\n> quoted\n\nTerm ${index}\n`;
      const markdown = `# Ahead\n\n${Array.from({ length: 30 }, (_, index) => section(index)).join("\n")}`;
      const opened = structured<{ channel_id: string; reader_url: string }>(
        (await agent.callTool({ name: "open_reader", arguments: { title: "Ahead", markdown } })) as CallToolResult,
      );
      /** The reader's document as it stands once the whole of it is in, and whether it came with the frame. */
      const shown = async (page: Page) => {
        const frame = await (await page.locator("#frame iframe").elementHandle())!.contentFrame();
        await frame!.waitForFunction(() => performance.getEntriesByName("reader:document").length > 0);
        return frame!.evaluate(() => ({
          ahead: performance.getEntriesByName("reader:ahead").length === 1,
          html: document.getElementById("doc")!.innerHTML,
          blocks: document.querySelectorAll("#doc [data-block]").length,
        }));
      };
      const person = await browser.newContext();
      const linked = await person.newPage();
      await linked.goto(opened.reader_url);
      const adopted = await shown(linked);
      // The same channel opened from the host's list: the page starts the reader then, without a state in its frame.
      const listed = await person.newPage();
      await listed.goto(new URL(linked.url()).href.replace(/#.*$/, ""));
      await listed.locator(`#channels a[href$="#${opened.channel_id}"]`).click();
      const rendered = await shown(listed);
      assert.deepEqual([adopted.ahead, rendered.ahead], [true, false], "the link's reader took the state in its frame; the list's read it");
      assert.ok(adopted.blocks > 300, `a long document (${adopted.blocks} blocks)`);
      assert.equal(adopted.html, rendered.html, "the same chunks, blocks, numbers and ids");
    } finally {
      await browser.close();
      await agent.close();
      stopBrowserHost({ BACKCHANNEL_HOME: dir });
      await cleanup();
    }
  });
});

/** Waits until the main frame of `page` holds the reader's document, then whether that frame shows (visible in the page). */
async function readerVisible(page: Page): Promise<boolean> {
  const element = await page.locator("#frame iframe").elementHandle();
  const frame = await element!.contentFrame();
  // An interval, not animation frames: a hidden frame may get none.
  await frame!.waitForFunction(() => document.getElementById("doc") !== null, undefined, { polling: 20 });
  return element!.evaluate((iframe) => getComputedStyle(iframe).visibility === "visible");
}

describe("backchannel web", { timeout: 180_000 }, () => {
  test("in the foreground: its link, the open channels with theirs; a second one lists them and points at the first; --stop ends it", async () => {
    const { dir, cleanup } = await tempDataDir();
    const env = { BACKCHANNEL_HOME: dir };
    const agent = await connectServer(dir);
    try {
      const opened = structured<{ channel_id: string }>(
        (await agent.callTool({ name: "open_reader", arguments: { title: "Listed", markdown: "# Listed\n\nText." } })) as CallToolResult,
      );
      const host = await startWeb(env);
      try {
        await host.printed(new RegExp(`${opened.channel_id}\n    http`));
        assert.match(host.link.href, /^http:\/\/127\.0\.0\.1:\d+\/\?k=[A-Za-z0-9_-]{43}$/);
        assert.match(host.stdout(), new RegExp(`Listed  ${opened.channel_id}\\n    ${escapeRegExp(host.link.href)}#${opened.channel_id}\\n`));
        const second = web(env, []);
        assert.equal(second.status, 0, second.stderr);
        assert.match(second.stdout, new RegExp(`runs at ${escapeRegExp(host.link.origin)}/ \\(pid ${host.child.pid}\\)`));
        assert.ok(second.stdout.includes(`${host.link.href}#${opened.channel_id}`));
        assert.match(web(env, ["--list"]).stdout, new RegExp(escapeRegExp(`${host.link.href}#${opened.channel_id}`)));
        const stopped = web(env, ["--stop"]);
        assert.match(stopped.stdout, /Stopped the browser host/);
        assert.equal(await host.exited, 0);
        assert.match(web(env, ["--stop"]).stdout, /No browser host runs/);
      } finally {
        await host.stop();
      }
    } finally {
      await agent.close();
      await cleanup();
    }
  });

  test("--help, and errors that say what was wrong and what to do", () => {
    const help = web({}, ["--help"]);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: backchannel web/);
    for (const [args, message] of [
      [["--port", "eighty"], /--port takes a port number/],
      [["--list", "--stop"], /--list and --stop do not go together/],
      [["--home", "/tmp"], /--home goes with --playground/],
      [["--idle-minute", "3"], /--idle-minutes/],
      [["--idle-minutes", "soon"], /--idle-minutes takes a number of minutes/],
    ] as const) {
      const result = web({}, [...args]);
      assert.equal(result.status, 1, args.join(" "));
      assert.match(result.stderr, message);
      assert.match(result.stderr, /backchannel web --help/);
    }
  });
});

describe("over a Redis store", { skip: redisSkipReason(), timeout: 120_000 }, () => {
  test("the host serves the store the server uses, and lists its channels", async () => {
    const redis = await startRedis();
    const { dir, cleanup } = await tempDataDir();
    const env = { BACKCHANNEL_HOME: dir, BACKCHANNEL_STORE: redis.url(3) };
    try {
      const server = await connectServer(dir, env, TERMINAL);
      let link: { url: URL; channelId: string };
      try {
        link = await readerUrl(server, "In Redis");
      } finally {
        await server.close();
      }
      const { page, session, cookie } = await openBrowserLink(link.url.href);
      assert.equal(page.status, 200);
      const listed = (await (await fetch(new URL("channels", session), { headers: { cookie } })).json()) as {
        channels: { id: string; title: string }[];
      };
      assert.deepEqual(
        listed.channels.map((channel) => [channel.id, channel.title]),
        [[link.channelId, "In Redis"]],
      );
      // The host of the Redis store, apart from the file store's of the same data directory.
      assert.deepEqual(
        readdirSync(join(dir, "browser")).filter((name) => name.endsWith(".json")),
        [readdirSync(join(dir, "browser")).find((name) => /^redis-[0-9a-f]{16}\.json$/.test(name))],
      );
    } finally {
      stopBrowserHost(env);
      await cleanup();
      await redis.stop();
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
