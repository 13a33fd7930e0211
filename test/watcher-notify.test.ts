/**
 * `backchannel watch --notify`: a desktop notification when messages arrive, and one
 * note on stderr where none can be shown.
 *
 * A headless machine has no desktop notification service, so `notify-send` is played
 * here by a small script on PATH that records its arguments (or fails, as notify-send
 * does without a desktop session). The watcher itself runs for real.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { watch } from "node:fs";
import { dirname, join } from "node:path";
import { FileStore } from "../server/store/file-store.js";
import { spawnWatcher, tempDataDir } from "./helpers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  store = new FileStore({ dataDir });
});
after(() => cleanup());

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
  const watcher = spawnWatcher(dataDir, ["no-notifier", "--notify"], { PATH: dirname(process.execPath) });
  assert.equal(await watcher.exited, 0);
  assert.match(watcher.stdout(), /1 message waiting on no-notifier \(ready\)/);
  assert.match(watcher.stderr(), /no desktop notification: notify-send not found \(on Debian and Ubuntu: apt-get install libnotify-bin/);
});

test("a notify-send that fails (no desktop session) is reported once, in follow mode too", async () => {
  const { bin, record } = await fakeNotifySend("failing", 1);
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
