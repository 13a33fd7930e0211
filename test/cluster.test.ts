/**
 * A real deployment: the cluster of deploy/cluster.ts (one redis-server, two
 * `backchannel serve --http` replicas over it, Debian's nginx as a round-robin load
 * balancer in front), as `npm run cluster` starts it; and the same over a Redis Cluster
 * of three primaries and three replicas (`npm run cluster -- --redis-cluster`). Chromium opens the playground's
 * host page from nginx, so the reader's calls go through the balancer; the agent is an
 * SDK client through the balancer too. nginx's access log tells which replica served
 * each request.
 *
 * Nothing is mocked. Without nginx, redis-server or Chromium the suite is skipped
 * loudly; in CI (`$CI` set) it fails instead.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client, SdkHttpError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { chromium, type Browser } from "playwright-core";
import { type Cluster, NGINX, startCluster } from "../deploy/cluster.js";
import type { AccessLogEntry } from "../deploy/nginx-config.js";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, CLI, spawnWatcher, structured, tempDataDir } from "./support/helpers.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";
import { ReaderPage } from "./support/reader-page.js";
import { redisSkipReason } from "./support/redis-server.js";

/** Why nginx cannot run here, or undefined. @throws Error in CI, where it must. */
function nginxSkipReason(): string | undefined {
  if (spawnSync(NGINX, ["-v"]).status === 0) return undefined;
  const reason = `nginx is not installed at ${NGINX} (apt-get install nginx, or set NGINX)`;
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the cluster test must run`);
  process.stderr.write(`\n*** SKIPPING the cluster test: ${reason}. It runs, and must pass, in CI. ***\n\n`);
  return reason;
}

const nginxSkip = nginxSkipReason();
const skip = nginxSkip ?? redisSkipReason() ?? browserSkipReason();

const DOCUMENT = `# Replicas

A load balancer sends each request to the next replica in turn.

Every replica reads and writes the same Redis, so none of them keeps a channel to itself.
`;

/** Requests of the reader's page (Chromium) to the MCP endpoint. */
function fromBrowser(entries: AccessLogEntry[]): AccessLogEntry[] {
  return entries.filter((entry) => entry.path === "/mcp" && /Chrome/.test(entry.userAgent));
}

/**
 * The share of consecutive requests (in the order they started) that went to different
 * replicas: 1 for round-robin over two. The log's times have millisecond resolution, so
 * requests that started in the same millisecond are in no known order: they are taken
 * in the order that alternates.
 */
function alternation(entries: AccessLogEntry[]): number {
  const pending = entries.filter((entry) => entry.upstreams.length === 1).sort((a, b) => a.startedAt - b.startedAt);
  let changes = 0;
  let previous: AccessLogEntry | undefined;
  const count = pending.length;
  while (pending.length > 0) {
    const tied = pending.filter((entry) => entry.startedAt === pending[0]!.startedAt);
    const next = tied.find((entry) => entry.upstreams[0] !== previous?.upstreams[0]) ?? tied[0]!;
    pending.splice(pending.indexOf(next), 1);
    if (previous && next.upstreams[0] !== previous.upstreams[0]) changes += 1;
    previous = next;
  }
  return changes / Math.max(1, count - 1);
}

describe("the cluster: two replicas over one Redis behind nginx", { skip, timeout: 180_000 }, () => {
  let cluster: Cluster;
  let browser: Browser;
  let agent: Client;
  const pageErrors: string[] = [];

  before(async () => {
    cluster = await startCluster();
    // The model of the host whose page shows the reader (an MCP Apps host): it is handed no browser link.
    agent = new Client({ name: "cluster-test-agent", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await agent.connect(new StreamableHTTPClientTransport(cluster.mcpUrl));
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await agent?.close();
    await cluster?.stop();
  });

  /** Opens a new channel with the agent and the reader's page on it, through the balancer. */
  async function openReader(): Promise<ReaderPage> {
    const opened = structured<{ channel_id: string }>(
      await agent.callTool({ name: "open_reader", arguments: { title: "Replicas", markdown: DOCUMENT } }),
    );
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(new URL(`/?agent=off#${opened.channel_id}`, cluster.url).href);
    await page.locator("#channel", { hasText: opened.channel_id }).waitFor();
    return new ReaderPage(page, agent, opened.channel_id);
  }

  /** The person asks about `passage`; the agent reads the ask through the balancer and answers `text`, which the card shows. */
  async function askAndAnswer(reader: ReaderPage, passage: string, question: string, text: string): Promise<void> {
    await reader.selectAndAsk(passage);
    await reader.submit(question);
    const { message } = await reader.nextMessage("ask");
    assert.equal(message.data.question, question);
    await reader.answer(String(message.data.thread_id), text, text);
  }

  test("the reader opened through the balancer asks, the agent answers through it, and the calls alternate replicas", async (t) => {
    const reader = await openReader();
    await askAndAnswer(reader, "next replica in turn", "Which replica answers me?", "Any of them: they share the store.");
    // Closed, so that its waiting poll ends and is logged: a call still open is not in the log yet.
    await reader.page.close();
    await cluster.settled();

    const log = (await cluster.accessLog()).filter((entry) => entry.path === "/mcp");
    const browserCalls = fromBrowser(log);
    for (const { address } of cluster.replicas) {
      const count = browserCalls.filter((entry) => entry.upstreams.includes(address)).length;
      assert.ok(count >= browserCalls.length / 3, `replica ${address} served ${count} of the page's ${browserCalls.length} calls`);
    }
    const share = alternation(log);
    t.diagnostic(`${log.length} calls, the page's ${browserCalls.length}; ${Math.round(share * 100)}% of consecutive calls changed replica`);
    // Loose: under load, a request's logged start can trail the moment nginx chose its replica.
    assert.ok(share >= 0.9, `only ${Math.round(share * 100)}% of consecutive calls changed replica:\n${JSON.stringify(log, null, 1)}`);
    // 499: the page closed its waiting poll.
    const failed = log.filter((entry) => entry.status >= 500);
    assert.deepEqual(failed, [], "no call failed");
    assert.deepEqual(pageErrors, []);
  });

  test("a replica SIGKILLed mid-session: the reader keeps working with at most one failed call", async (t) => {
    const reader = await openReader();
    await askAndAnswer(reader, "next replica in turn", "Before the kill?", "Both replicas are up.");
    const before = (await cluster.accessLog()).length;
    const [killed, survivor] = cluster.replicas;
    await killed!.process.stop("SIGKILL");

    await askAndAnswer(reader, "same Redis", "And now that one is gone?", "The other one answers.");
    const since = (await cluster.accessLog()).slice(before);
    const failed = fromBrowser(since).filter((entry) => entry.status >= 500);
    // Whether the reader's waiting poll was on the killed replica is the round-robin's choice: then it failed once, else nothing did.
    t.diagnostic(`the reader's calls after the kill: ${fromBrowser(since).length}, failed: ${failed.length}`);
    assert.ok(failed.length <= 1, `the reader's failed calls: ${JSON.stringify(failed)}`);
    const served = since.filter((entry) => entry.status < 500 && entry.upstreams.length > 0);
    assert.ok(
      served.every((entry) => entry.upstreams.at(-1) === survivor!.address),
      `every call after the kill ends on the survivor: ${JSON.stringify(served)}`,
    );
    assert.deepEqual(pageErrors, []);
  });

  test("the remote watcher, through the balancer, wakes on the reader's ask and leaves it for the agent", async () => {
    const reader = await openReader();
    // The reader says it is ready when it opens: the agent reads that first.
    await reader.nextMessage("ready");
    const empty = await tempDataDir();
    try {
      const watcher = spawnWatcher(empty.dir, [reader.channelId, "--url", cluster.mcpUrl.href, "--timeout", "60"]);
      await watcher.ready();
      await reader.selectAndAsk("keeps a channel to itself");
      await reader.submit("Did the watcher hear this?");
      assert.equal(await watcher.exited, 0, watcher.stderr());
      assert.match(watcher.stdout(), new RegExp(`^1 message waiting on ${reader.channelId} \\(ask\\)`));
      const { message } = await reader.nextMessage("ask");
      assert.equal(message.data.question, "Did the watcher hear this?");
    } finally {
      await reader.page.close();
      await empty.cleanup();
    }
  });
});

describe("the cluster with tokens: each principal its own channels", { skip, timeout: 180_000 }, () => {
  let cluster: Cluster;
  let browser: Browser;
  let dataDir: { dir: string; cleanup: () => Promise<void> };
  const tokens: Record<"page" | "agent" | "other", string> = { page: "", agent: "", other: "" };

  /** Makes a token for `principal` with the real command, in the cluster's token file. */
  function addToken(principal: string): string {
    const run = spawnSync(process.execPath, [CLI, "token", "add", principal, "--tokens", join(dataDir.dir, "tokens.json")], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.trim().split(/\s+/).at(-1)!;
  }

  /** An SDK client through the balancer with `token` (none: no Authorization header). */
  async function clientWith(token: string | undefined): Promise<Client> {
    const client = new Client({ name: "cluster-auth-test", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(cluster.mcpUrl, token === undefined ? {} : { authProvider: { token: async () => token } }),
    );
    return client;
  }

  before(async () => {
    dataDir = await tempDataDir();
    // The person's host and the agent hold two tokens of one principal; another principal has its own.
    tokens.page = addToken("alice");
    tokens.agent = addToken("alice");
    tokens.other = addToken("bob");
    cluster = await startCluster({ replicaArgs: ["--auth", "tokens", "--tokens", join(dataDir.dir, "tokens.json")] });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await cluster?.stop();
    await dataDir?.cleanup();
  });

  test("the reader with the person's token and the agent with its own talk; another principal sees nothing and no token is refused", async () => {
    const agent = await clientWith(tokens.agent);
    const other = await clientWith(tokens.other);
    try {
      const opened = structured<{ channel_id: string }>(
        await agent.callTool({ name: "open_reader", arguments: { title: "Replicas", markdown: DOCUMENT } }),
      );
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      // What a host does with the user's token: every call of the page carries it.
      await page.setExtraHTTPHeaders({ authorization: `Bearer ${tokens.page}` });
      await page.goto(new URL(`/?agent=off#${opened.channel_id}`, cluster.url).href);
      await page.locator("#channel", { hasText: opened.channel_id }).waitFor();
      const reader = new ReaderPage(page, agent, opened.channel_id);
      await reader.nextMessage("ready");

      await reader.selectAndAsk("next replica in turn");
      await reader.submit("Who else can read this?");
      // The other principal: the channel is one that does not exist, for reading and for the watcher.
      const seen = structured<{ messages: unknown[] }>(
        await other.callTool({ name: "poll_agent_messages", arguments: { channel_id: opened.channel_id, after: 0 } }),
      );
      assert.deepEqual(seen.messages, [], "bob reads nothing of alice's channel");
      const watcherOfOther = spawnWatcher(dataDir.dir, [opened.channel_id, "--url", cluster.mcpUrl.href, "--timeout", "2"], {
        BACKCHANNEL_TOKEN: tokens.other,
      });
      assert.equal(await watcherOfOther.exited, 2, `bob's watcher sees no mail: ${watcherOfOther.stdout()}${watcherOfOther.stderr()}`);
      const watcherOfAgent = spawnWatcher(dataDir.dir, [opened.channel_id, "--url", cluster.mcpUrl.href, "--timeout", "30"], {
        BACKCHANNEL_TOKEN: tokens.agent,
      });
      assert.equal(await watcherOfAgent.exited, 0, watcherOfAgent.stderr());

      const { message } = await reader.nextMessage("ask");
      await reader.answer(String(message.data.thread_id), "Only you.", "Only you.");
      // Bob writing to the same id writes to his own channel: alice's reader never shows it.
      structured(
        await other.callTool({
          name: "notify_ui",
          arguments: { channel_id: opened.channel_id, event: "answer", data: { thread_id: message.data.thread_id, text: "bob was here" } },
        }),
      );
      await reader.answer(String(message.data.thread_id), "Still only you.", "Still only you.");
      const frame = await reader.frame();
      assert.equal(await frame.locator(".message.agent", { hasText: "bob was here" }).count(), 0);
      await page.close();
    } finally {
      await agent.close();
      await other.close();
    }
    await assert.rejects(clientWith(undefined), (error) => error instanceof SdkHttpError && error.status === 401);
    const noToken = spawnWatcher(dataDir.dir, ["ch-any", "--url", cluster.mcpUrl.href], { BACKCHANNEL_TOKEN: "" });
    assert.equal(await noToken.exited, 1);
    assert.match(noToken.stderr(), /wants a token \(401\): set \$BACKCHANNEL_TOKEN/);
    const badToken = spawnWatcher(dataDir.dir, ["ch-any", "--url", cluster.mcpUrl.href], { BACKCHANNEL_TOKEN: `${tokens.agent}x` });
    assert.equal(await badToken.exited, 1);
    assert.match(badToken.stderr(), /refused the token in \$BACKCHANNEL_TOKEN \(401\)/);
  });
});

describe("the cluster over a Redis Cluster (npm run cluster -- --redis-cluster)", { skip: nginxSkip ?? redisSkipReason(), timeout: 180_000 }, () => {
  let cluster: Cluster;
  let app: Client;
  let agent: Client;
  before(async () => {
    cluster = await startCluster({ redisCluster: true });
    // Both as an MCP Apps host's: the app's calls (notify_agent) are app-only tools, which a host that renders apps makes for it.
    app = new Client({ name: "redis-cluster-app", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    agent = new Client({ name: "redis-cluster-agent", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await Promise.all([
      app.connect(new StreamableHTTPClientTransport(cluster.mcpUrl)),
      agent.connect(new StreamableHTTPClientTransport(cluster.mcpUrl)),
    ]);
  });
  after(async () => {
    await Promise.allSettled([app?.close(), agent?.close()]);
    await cluster?.stop();
  });

  test("an ask and its answer through nginx; the channel's primary SIGKILLed: the same servers carry the next one once its replica took over", async (t) => {
    const channel = "over-a-redis-cluster";
    const cursors = { agent: 0, ui: 0 };
    /** The app asks `n`, the agent reads it and answers, the app reads the answer; throws the first tool error. */
    const exchange = async (n: number) => {
      const call = async (client: Client, name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: { channel_id: channel, ...args } });
        const code = (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
        if (result.isError) throw new Error(`${name} failed with ${code}: ${JSON.stringify(result.content)}`);
        return structured<{ messages: { data: { n: number } }[]; cursor: number }>(result);
      };
      /** `client` reads `queue` from its cursor on, and must find message `n` there. */
      const read = async (client: Client, queue: "agent" | "ui", what: string) => {
        const { messages, cursor } = await call(client, `poll_${queue}_messages`, { after: cursors[queue], wait_ms: 5000 });
        cursors[queue] = cursor;
        assert.ok(
          messages.some((message) => message.data.n === n),
          `${what} ${n}`,
        );
      };
      await call(app, "notify_agent", { event: "ask", data: { n } });
      await read(agent, "agent", "the agent has ask");
      await call(agent, "notify_ui", { event: "answer", data: { n } });
      await read(app, "ui", "the app has answer");
    };
    await exchange(1);
    const redisCluster = cluster.redisCluster!;
    const primary = (await redisCluster.primaryOf(`bc:{${channel}}:meta`))!;
    await redisCluster.kill(primary);
    const killedAt = Date.now();
    let failures = 0;
    for (;;) {
      try {
        await exchange(2);
        break;
      } catch (error) {
        failures += 1;
        assert.match(
          String(error),
          /failed with (STORE_UNAVAILABLE|STORE_NOT_REPLICATED)/,
          "a call fails as the store unavailable while the primary is gone",
        );
        assert.ok(Date.now() - killedAt < 30_000, `the exchange works again within 30 s of the kill: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    for (const replica of cluster.replicas) assert.equal(replica.process.ended(), false, `${replica.process.name} stayed up`);
    t.diagnostic(`the exchange worked again ${Date.now() - killedAt} ms after the kill, after ${failures} failed tries`);
  });
});
