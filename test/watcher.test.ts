/**
 * The watcher as a real process: exit 0 soon after a message lands, 2 on timeout, 1 on
 * a bad id or data directory; --follow prints exactly one line per message; it never
 * changes the queue.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { FileStore } from "../server/store/file-store.js";
import { queueFile } from "../server/core/paths.js";
import { spawnWatcher, tempDataDir } from "./helpers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  store = new FileStore({ dataDir });
});
after(() => cleanup());

describe("exit mode", () => {
  test("exits 0 within 500 ms after a message lands, with a one-line summary", async () => {
    await store.append("wake", "ui", "hello");
    const watcher = spawnWatcher(dataDir, ["wake", "--timeout", "30"]);
    await watcher.ready();
    await store.append("wake", "agent", "ask", { question: "what?" });
    const landed = performance.now();
    const code = await watcher.exited;
    const latency = performance.now() - landed;
    assert.equal(code, 0, watcher.stderr());
    assert.ok(latency < 500, `exited ${latency.toFixed(1)} ms after the message landed`);
    const lines = watcher.stdout().trim().split("\n");
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^1 message waiting on wake \(ask\)\. Read with poll_agent_messages/);
  });

  test("exits 0 at once when messages already wait, and only peeks", async () => {
    await store.append("early", "agent", "ask", { question: "a" });
    await store.append("early", "agent", "ask", { question: "b" });
    await store.append("early", "agent", "ready");
    const before = await readFile(queueFile(dataDir, "early", "agent"), "utf8");
    const watcher = spawnWatcher(dataDir, ["early"]);
    assert.equal(await watcher.exited, 0);
    assert.match(watcher.stdout(), /3 messages waiting on early \(ask x2, ready\)/);
    assert.equal(await readFile(queueFile(dataDir, "early", "agent"), "utf8"), before, "the queue file is untouched");
  });

  test("waits for a channel that does not exist yet", async () => {
    const watcher = spawnWatcher(dataDir, ["later", "--timeout", "30"]);
    await watcher.ready();
    await store.append("later", "agent", "ready");
    assert.equal(await watcher.exited, 0, watcher.stderr());
    assert.match(watcher.stdout(), /1 message waiting on later \(ready\)/);
  });

  test("exits 2 on timeout, saying how to re-arm", async () => {
    const watcher = spawnWatcher(dataDir, ["quiet", "--timeout", "0.3"]);
    assert.equal(await watcher.exited, 2);
    assert.match(watcher.stdout(), /No message on quiet after 0\.3 s\. Re-arm: node \S+cli\.js watch quiet$/m);
  });

  for (const bad of ["../x", "a/b", "x".repeat(65)]) {
    test(`exits 1 on the bad id ${JSON.stringify(bad.slice(0, 10))}`, async () => {
      const watcher = spawnWatcher(dataDir, [bad]);
      assert.equal(await watcher.exited, 1);
      assert.match(watcher.stderr(), /invalid channel id/);
      assert.equal(watcher.stdout(), "");
    });
  }

  test("exits 1 when the data directory does not exist", async () => {
    const watcher = spawnWatcher(`${dataDir}/missing`, ["any"]);
    assert.equal(await watcher.exited, 1);
    assert.match(watcher.stderr(), /no data directory at .*BACKCHANNEL_HOME/);
  });

  test("exits 1 on a bad --timeout", async () => {
    const watcher = spawnWatcher(dataDir, ["any", "--timeout", "soon"]);
    assert.equal(await watcher.exited, 1);
    assert.match(watcher.stderr(), /--timeout takes a number of seconds/);
  });
});

describe("follow mode", () => {
  test("prints exactly one line per message, never a seq twice, and keeps going", async () => {
    await store.append("follow", "agent", "ask", { question: "first?" });
    const watcher = spawnWatcher(dataDir, ["follow", "--follow", "--timeout", "30"]);
    assert.deepEqual(await watcher.lines(1), ["follow #1 ask: first?"]);
    await store.append("follow", "agent", "ask", { question: "second\nline?" });
    assert.deepEqual((await watcher.lines(2))[1], "follow #2 ask: second line?");
    // A reader drains the queue: the watcher must not repeat or lose track.
    await store.poll("follow", "agent");
    await store.append("follow", "agent", "ready");
    await store.append("follow", "agent", "ask", { question: "x".repeat(400) });
    const lines = await watcher.lines(4);
    assert.equal(lines[2], "follow #3 ready: {}");
    assert.match(lines[3]!, /^follow #4 ask: x{160}…$/);
    watcher.child.kill();
    await watcher.exited;
    assert.equal(watcher.stdout().trim().split("\n").length, 4, "one line per message, nothing more");
  });

  test("a burst is coalesced into one summary line", async () => {
    const watcher = spawnWatcher(dataDir, ["burst", "--follow", "--timeout", "30"]);
    await watcher.ready();
    // Six messages land in one replace of the queue file, as a burst does under load.
    const ts = new Date().toISOString();
    const messages = Array.from({ length: 6 }, (_, i) => ({ seq: i + 1, event: "ask", data: { question: `q${i}` }, ts }));
    const path = queueFile(dataDir, "burst", "agent");
    await mkdir(dirname(path), { recursive: true });
    await writeFile(`${path}.tmp`, JSON.stringify({ version: 1, next_seq: 7, messages }));
    await rename(`${path}.tmp`, path);
    assert.deepEqual(await watcher.lines(1), [
      '6 messages waiting on burst (ask x6). Read with poll_agent_messages {"channel_id":"burst"}.',
    ]);
    await store.append("burst", "agent", "ready");
    assert.equal((await watcher.lines(2))[1], "burst #7 ready: {}");
    watcher.child.kill();
    await watcher.exited;
  });

  test("ends with exit 2 at its timeout", async () => {
    const watcher = spawnWatcher(dataDir, ["follow-end", "--follow", "--timeout", "0.3"]);
    assert.equal(await watcher.exited, 2);
    assert.match(watcher.stdout(), /Re-arm: node \S+cli\.js watch follow-end --follow$/m);
  });
});
