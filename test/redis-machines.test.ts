/**
 * Across machines, as far as one machine allows: three "machines" that share nothing but
 * Redis. Each has a data directory of its own (`BACKCHANNEL_HOME`) and two of them a
 * network of their own: a Linux network namespace that reaches Redis only over a veth
 * pair (10.203.x.0/24), as another host on a LAN would. The reader's tools run on the
 * first (this host's network), the agent's on the second, the watcher on the third; the
 * data directories stay empty of channels.
 *
 * Making namespaces takes root and iproute2 (`ip netns`); where that is refused the test
 * is skipped with a loud note (in CI, which runs as root, it must run).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readdir } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI, structured, tempDataDir } from "./support/helpers.js";
import { type RedisServer, redisSkipReason, startRedis } from "./support/redis-server.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

/** A network namespace joined to this host by a veth pair. */
interface Machine {
  name: string;
  /** This host's address on the pair: where the machine reaches Redis. */
  hostAddress: string;
}

const SUFFIX = String(process.pid % 50_000);

/** Why namespaces cannot be made here, or `undefined` when they can (checked by making one). */
function namespaceSkipReason(): string | undefined {
  const redis = redisSkipReason();
  if (redis) return redis;
  const probe = `bcprobe${SUFFIX}`;
  const made = spawnSync("ip", ["netns", "add", probe], { encoding: "utf8" });
  if (made.status === 0) {
    spawnSync("ip", ["netns", "del", probe]);
    return undefined;
  }
  const reason = `cannot make a network namespace (${(made.stderr || made.error?.message || "ip netns add failed").trim()}): run as root with iproute2`;
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the cross-machine test must run`);
  process.stderr.write(`\n*** SKIPPING the cross-machine Redis test: ${reason}. ***\n\n`);
  return reason;
}

function ip(...args: string[]): void {
  const result = spawnSync("ip", args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`ip ${args.join(" ")}: ${result.stderr}`);
}

/** Makes namespace number `index` with a veth pair to this host, and brings both ends up. */
function makeMachine(index: number): Machine {
  const name = `bc${SUFFIX}m${index}`;
  const subnet = `10.203.${(Number(SUFFIX) % 120) * 2 + index}`;
  const [outside, inside] = [`bc${SUFFIX}h${index}`, `bc${SUFFIX}n${index}`];
  ip("netns", "add", name);
  ip("link", "add", outside, "type", "veth", "peer", "name", inside);
  ip("link", "set", inside, "netns", name);
  ip("addr", "add", `${subnet}.1/24`, "dev", outside);
  ip("link", "set", outside, "up");
  ip("netns", "exec", name, "ip", "addr", "add", `${subnet}.2/24`, "dev", inside);
  ip("netns", "exec", name, "ip", "link", "set", inside, "up");
  ip("netns", "exec", name, "ip", "link", "set", "lo", "up");
  return { name, hostAddress: `${subnet}.1` };
}

function removeMachine(machine: Machine): void {
  // Deleting the namespace deletes the pair with it.
  spawnSync("ip", ["netns", "del", machine.name]);
}

/** The command line that runs `args` of node inside `machine` (or here, without one). */
function commandIn(machine: Machine | undefined, args: string[]): { command: string; args: string[] } {
  return machine ? { command: "ip", args: ["netns", "exec", machine.name, process.execPath, ...args] } : { command: process.execPath, args };
}

/** An SDK client connected to `backchannel serve` running on `machine` with its own data directory and store URL. */
async function serverOn(machine: Machine | undefined, env: Record<string, string>): Promise<Client> {
  const { command, args } = commandIn(machine, [CLI, "serve"]);
  const transport = new StdioClientTransport({ command, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: "pipe" });
  transport.stderr?.on("data", () => undefined);
  const client = new Client({ name: "backchannel-machines-test", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
  await client.connect(transport);
  return client;
}

const skip = namespaceSkipReason();

describe("three machines sharing channels only through Redis", { skip }, () => {
  let redis: RedisServer;
  let agentMachine: Machine;
  let watcherMachine: Machine;
  const homes: { dir: string; cleanup: () => Promise<void> }[] = [];
  before(async () => {
    agentMachine = makeMachine(0);
    watcherMachine = makeMachine(1);
    // Redis listens on this host's loopback and on both pairs, as a LAN server would.
    redis = await startRedis({ bind: "127.0.0.1", extra: ["--bind", "127.0.0.1", agentMachine.hostAddress, watcherMachine.hostAddress] });
    for (let index = 0; index < 3; index++) homes.push(await tempDataDir());
  });
  after(async () => {
    await redis?.stop();
    for (const machine of [agentMachine, watcherMachine]) if (machine) removeMachine(machine);
    await Promise.all(homes.map((home) => home.cleanup()));
  });

  test("the reader opened on one, the agent answering on another, the watcher on a third", { timeout: 120_000 }, async () => {
    const [readerHome, agentHome, watcherHome] = homes.map((home) => home.dir) as [string, string, string];
    const storeFor = (address: string) => `redis://${address}:${redis.port}/0`;
    // The other machines cannot reach this host's loopback: what they share goes over the pair.
    const unreachable = spawnSync("ip", ["netns", "exec", agentMachine.name, process.execPath, CLI, "watch", "x", "--timeout", "1"], {
      env: { ...process.env, BACKCHANNEL_HOME: agentHome, BACKCHANNEL_STORE: storeFor("127.0.0.1") },
      encoding: "utf8",
    });
    assert.equal(unreachable.status, 1, "in its namespace, 127.0.0.1 is not this host");
    assert.match(unreachable.stderr, /is unreachable \(.*ECONNREFUSED/);

    const reader = await serverOn(undefined, { BACKCHANNEL_HOME: readerHome, BACKCHANNEL_STORE: storeFor("127.0.0.1") });
    const agent = await serverOn(agentMachine, { BACKCHANNEL_HOME: agentHome, BACKCHANNEL_STORE: storeFor(agentMachine.hostAddress) });
    try {
      const opened = structured<{ channel_id: string; title: string }>(
        await reader.callTool({ name: "open_reader", arguments: { title: "Across", markdown: "# Across\n\nA passage read on one machine." } }),
      );
      const channel = opened.channel_id;

      const { command, args } = commandIn(watcherMachine, [CLI, "watch", channel, "--timeout", "60"]);
      const watcher = spawn(command, args, {
        env: { ...process.env, BACKCHANNEL_HOME: watcherHome, BACKCHANNEL_STORE: storeFor(watcherMachine.hostAddress) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let watcherOut = "";
      let watcherErr = "";
      watcher.stdout.on("data", (chunk: Buffer) => (watcherOut += chunk.toString()));
      const armed = new Promise<void>((resolve) =>
        watcher.stderr.on("data", (chunk: Buffer) => {
          watcherErr += chunk.toString();
          if (/waiting for messages/.test(watcherErr)) resolve();
        }),
      );
      const watcherExit = new Promise<number | null>((resolve) => watcher.on("exit", resolve));
      await armed;

      const state = structured<{ document: { title: string } | null }>(
        await reader.callTool({ name: "reader_state", arguments: { channel_id: channel } }),
      );
      assert.equal(state.document?.title, "Across", "the app's state tool reads what open_reader stored");
      const ask = { thread_id: "t1", quote: "A passage", paragraph: "A passage read on one machine.", question: "Where was this read?", history: [] };
      structured(await reader.callTool({ name: "notify_agent", arguments: { channel_id: channel, event: "ask", data: ask } }));

      assert.equal(await watcherExit, 0, watcherErr);
      assert.match(watcherOut, new RegExp(`1 message waiting on ${channel} \\(ask\\)`));

      const polled = structured<{ messages: { event: string; data: { question: string } }[] }>(
        await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channel } }),
      );
      assert.deepEqual(
        polled.messages.map((message) => [message.event, message.data.question]),
        [["ask", "Where was this read?"]],
      );
      structured(
        await agent.callTool({
          name: "notify_ui",
          arguments: { channel_id: channel, event: "answer", data: { thread_id: "t1", text: "On another machine." } },
        }),
      );

      const answered = structured<{ messages: { event: string; data: { text: string } }[] }>(
        await reader.callTool({ name: "poll_ui_messages", arguments: { channel_id: channel, after: 0, wait_ms: 10_000 } }),
      );
      assert.deepEqual(
        answered.messages.filter((message) => message.event === "answer").map((message) => message.data.text),
        ["On another machine."],
      );
    } finally {
      await Promise.allSettled([reader.close(), agent.close()]);
    }
    for (const home of [readerHome, agentHome, watcherHome]) {
      const channels = await readdir(`${home}/channels`).catch(() => [] as string[]);
      assert.deepEqual(channels, [], `no channel was kept in ${home}: they live in Redis only`);
    }
  });
});
