/**
 * A real deployment: the cluster of deploy/cluster.ts (one redis-server, two
 * `backchannel serve --http` replicas over it, Debian's nginx as a round-robin load
 * balancer in front), as `npm run cluster` starts it. Chromium opens the playground's
 * host page from nginx, so the reader's calls go through the balancer; the agent is an
 * SDK client through the balancer too. nginx's access log tells which replica served
 * each request.
 *
 * Nothing is mocked. Without nginx, redis-server or Chromium the suite is skipped
 * loudly; in CI (`$CI` set) it fails instead.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { chromium, type Browser } from "playwright-core";
import { type Cluster, NGINX, startCluster } from "../deploy/cluster.js";
import type { AccessLogEntry } from "../deploy/nginx-config.js";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, spawnWatcher, structured, tempDataDir } from "./support/helpers.js";
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

const skip = nginxSkipReason() ?? redisSkipReason() ?? browserSkipReason();

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
    agent = new Client({ name: "cluster-test-agent", version: "0.0.0" });
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
