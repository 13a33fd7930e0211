/**
 * The watcher as a real process: exit 0 soon after a message lands, 2 on timeout, 1 on
 * a bad id or data directory; --follow prints exactly one line per message; --notify
 * shows a desktop notification or says once why it cannot; it never changes the queue.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chmod, mkdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { watch } from "node:fs";
import { dirname, join } from "node:path";
import { FileStore } from "../store/file/file-store.js";
import { queueFile } from "../core/paths.js";
import { spawnWatcher, tempDataDir } from "./support/helpers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  store = new FileStore({ dataDir });
});
after(() => cleanup());

describe("exit mode", () => {
  // A safety net a loaded machine keeps, far below --timeout: how fast the watcher wakes is a figure of bench/ (exit mode).
  test("exits 0 soon after a message lands, long before its timeout, with a one-line summary", async () => {
    await store.append("wake", "ui", "hello");
    const watcher = spawnWatcher(dataDir, ["wake", "--timeout", "30"]);
    await watcher.ready();
    await store.append("wake", "agent", "ask", { question: "what?" });
    const landed = performance.now();
    const code = await watcher.exited;
    const latency = performance.now() - landed;
    assert.equal(code, 0, watcher.stderr());
    assert.ok(latency < 5_000, `exited ${latency.toFixed(1)} ms after the message landed`);
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

  test("with --allow-missing, waits for a channel that does not exist yet", async () => {
    const watcher = spawnWatcher(dataDir, ["later", "--allow-missing", "--timeout", "30"]);
    await watcher.ready();
    await store.append("later", "agent", "ready");
    assert.equal(await watcher.exited, 0, watcher.stderr());
    assert.match(watcher.stdout(), /1 message waiting on later \(ready\)/);
  });

  test("a channel that does not exist ends it at once (exit 1), naming the channels with a close id and --allow-missing", async () => {
    const { dir, cleanup } = await tempDataDir();
    try {
      const own = new FileStore({ dataDir: dir });
      const opened = ["ch-mi4x2k1p-7hq3zd0w9v5bn2c8", "ch-mi4x2k1p-7hq3zd0w9v5bn2c9", "ch-mi4z8a0c-q1w2e3r4t5y6u7i8"];
      for (const id of opened) await own.append(id, "ui", "hello");
      // One character mistyped: an exit 1 at once, not the timeout (exit 2; by default 30 minutes).
      const typo = spawnWatcher(dir, ["ch-mi4x2k1p-7hq3zd0w9v5bm2c8", "--timeout", "20"]);
      assert.equal(await typo.exited, 1, typo.stderr());
      assert.equal(typo.stdout(), "", "nothing for the agent on stdout");
      assert.match(
        typo.stderr(),
        new RegExp(
          `^backchannel watch: no channel ch-mi4x2k1p-7hq3zd0w9v5bm2c8 in the data directory ${dir}\\. ` +
            "Did you mean ch-mi4x2k1p-7hq3zd0w9v5bn2c8 or ch-mi4x2k1p-7hq3zd0w9v5bn2c9\\? .*add --allow-missing\\n$",
        ),
      );
      // An id cut short when pasted names the channels it begins.
      const cut = spawnWatcher(dir, ["ch-mi4z8a0c-q1w2", "--timeout", "20"]);
      assert.equal(await cut.exited, 1);
      assert.match(cut.stderr(), /Did you mean ch-mi4z8a0c-q1w2e3r4t5y6u7i8\?/);
      // Nothing close: said so, in a store that holds channels, and in one that holds none.
      const far = spawnWatcher(dir, ["margin", "--timeout", "20"]);
      assert.equal(await far.exited, 1);
      assert.match(far.stderr(), /no channel margin in .*None of its 3 channels have a close id\. .*BACKCHANNEL_HOME/);
      const empty = spawnWatcher(dataDir, ["nobody-opened-this", "--timeout", "20"]);
      assert.equal(await empty.exited, 1);
      assert.match(empty.stderr(), /no channel nobody-opened-this in the data directory /);
    } finally {
      await cleanup();
    }
  });

  test("with --allow-missing, says at once on stderr that a channel does not exist and waits for it; says nothing of one that does", async () => {
    const watcher = spawnWatcher(dataDir, ["nobody-opened-this", "--allow-missing", "--timeout", "30"]);
    await watcher.ready();
    assert.match(watcher.stderr(), /no channel nobody-opened-this exists in this store yet: check the id .*waiting in case an app opens it/);
    await store.append("nobody-opened-this", "agent", "ready");
    assert.equal(await watcher.exited, 0, watcher.stderr());
    await store.append("opened", "ui", "hello");
    const known = spawnWatcher(dataDir, ["opened", "--timeout", "0.5"]);
    assert.equal(await known.exited, 2);
    assert.doesNotMatch(known.stderr(), /no channel/);
  });

  test("exits 2 on timeout, saying how to re-arm", async () => {
    await store.append("quiet", "ui", "hello");
    const watcher = spawnWatcher(dataDir, ["quiet", "--timeout", "0.3"]);
    assert.equal(await watcher.exited, 2);
    assert.match(watcher.stdout(), /No message on quiet after 0\.3 s\. Re-arm: node \S+main\.js watch quiet$/m);
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
    // 160 characters, the ellipsis among them (WATCH_PREVIEW_CHARS).
    assert.match(lines[3]!, /^follow #4 ask: x{159}…$/);
    watcher.child.kill();
    await watcher.exited;
    assert.equal(watcher.stdout().trim().split("\n").length, 4, "one line per message, nothing more");
  });

  test("a burst is coalesced into one summary line", async () => {
    const watcher = spawnWatcher(dataDir, ["burst", "--follow", "--allow-missing", "--timeout", "30"]);
    await watcher.ready();
    // Six messages land in one replace of the queue file (a compaction), as a burst does under load.
    const ts = new Date().toISOString();
    const messages = Array.from({ length: 6 }, (_, i) => ({ seq: i + 1, event: "ask", data: { question: `q${i}` }, ts }));
    const path = queueFile(dataDir, "burst", "agent");
    await mkdir(dirname(path), { recursive: true });
    await writeFile(`${path}.tmp`, `{"version":2,"next_seq":7}\n${messages.map((message) => `${JSON.stringify(message)}\n`).join("")}`);
    await rename(`${path}.tmp`, path);
    assert.deepEqual(await watcher.lines(1), ['6 messages waiting on burst (ask x6). Read with poll_agent_messages {"channel_id":"burst"}.']);
    await store.append("burst", "agent", "ready");
    assert.equal((await watcher.lines(2))[1], "burst #7 ready: {}");
    watcher.child.kill();
    await watcher.exited;
  });

  test("ends with exit 2 at its timeout", async () => {
    await store.append("follow-end", "ui", "hello");
    const watcher = spawnWatcher(dataDir, ["follow-end", "--follow", "--timeout", "0.3"]);
    assert.equal(await watcher.exited, 2);
    assert.match(watcher.stdout(), /Re-arm: node \S+main\.js watch follow-end --follow$/m);
  });
});

describe("--notify", () => {
  // A headless machine has no desktop notification service, so `notify-send` is played
  // here by a small script on PATH that records its arguments (or fails, as notify-send
  // does without a desktop session). The watcher itself runs for real.
  test("exit mode shows one notification with the message, then exits 0", async () => {
    const { bin, record } = await fakeNotifySend("shown");
    await store.append("notify", "agent", "ask", { question: "What does endowed mean?" });
    const watcher = spawnWatcher(dataDir, ["notify", "--notify"], { PATH: `${bin}:${process.env.PATH}` });
    assert.equal(await watcher.exited, 0, watcher.stderr());
    assert.match(watcher.stdout(), /^1 message waiting on notify \(ask\)/);
    assert.deepEqual((await whenWritten(record)).trim().split("\n"), ["--app-name=backchannel", "backchannel", "ask: What does endowed mean?"]);
    assert.doesNotMatch(watcher.stderr(), /no desktop notification/);
  });

  test("without notify-send, one line on stderr says so and watching goes on", async () => {
    await store.append("no-notifier", "agent", "ready");
    // A PATH with node alone: notify-send may share node's folder (/usr/bin on Debian).
    const bin = join(dataDir, "node-only-bin");
    await mkdir(bin);
    await symlink(process.execPath, join(bin, "node"));
    const watcher = spawnWatcher(dataDir, ["no-notifier", "--notify"], { PATH: bin });
    assert.equal(await watcher.exited, 0);
    assert.match(watcher.stdout(), /1 message waiting on no-notifier \(ready\)/);
    assert.match(watcher.stderr(), /no desktop notification: notify-send not found \(on Debian and Ubuntu: apt-get install libnotify-bin/);
  });

  test("a notify-send that fails (no desktop session) is reported once, in follow mode too", async () => {
    const { bin, record } = await fakeNotifySend("failing", 1);
    await store.append("failing-notify", "ui", "hello");
    const watcher = spawnWatcher(dataDir, ["failing-notify", "--follow", "--notify", "--timeout", "30"], { PATH: `${bin}:${process.env.PATH}` });
    await watcher.ready();
    await store.append("failing-notify", "agent", "ask", { question: "one?" });
    await watcher.lines(1);
    await whenWritten(record);
    await watcher.stderrMatching(/notify-send exited 1/);
    await store.append("failing-notify", "agent", "ask", { question: "two?" });
    assert.deepEqual(await watcher.lines(2), ["failing-notify #1 ask: one?", "failing-notify #2 ask: two?"]);
    // The second notification is spawned before the line is read back; let it fail too.
    await new Promise<void>((resolve) => setImmediate(resolve));
    watcher.child.kill();
    await watcher.exited;
    assert.equal(watcher.stderr().match(/no desktop notification: notify-send exited 1/g)?.length, 1, watcher.stderr());
  });
});

/** A folder holding a `notify-send` that records its arguments in `record` (or exits `code`), to put first on PATH. */
async function fakeNotifySend(name: string, code = 0): Promise<{ bin: string; record: string }> {
  const bin = join(dataDir, `${name}-bin`);
  const record = join(dataDir, `${name}.args`);
  await mkdir(bin);
  // Written to a temporary name, then renamed: the test waits for the name to appear.
  await writeFile(join(bin, "notify-send"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${record}.tmp" && mv "${record}.tmp" "${record}"\nexit ${code}\n`);
  await chmod(join(bin, "notify-send"), 0o755);
  return { bin, record };
}

/** Resolves with the content of `path` once it exists. */
async function whenWritten(path: string): Promise<string> {
  // Every event is counted from before the first read, so that none falls between a
  // read that finds nothing and the wait that follows it.
  let events = 0;
  let wake: (() => void) | undefined;
  const watcher = watch(dirname(path), () => {
    events += 1;
    wake?.();
  });
  try {
    for (;;) {
      const seen = events;
      const content = await readFile(path, "utf8").catch(() => undefined);
      if (content !== undefined) return content;
      if (events === seen) await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    watcher.close();
  }
}
