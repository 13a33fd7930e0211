/**
 * Hostile and broken disks: links and files planted where the store's own belong, a
 * full disk, a read-only disk, permissions, and a flooded channel next to a quiet one.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { execFileSync, spawn } from "node:child_process";
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "../store/file/file-store.js";
import { mintChannelId } from "../core/ids.js";
import { channelDir, channelsDir, queueFile, stateFile } from "../core/paths.js";
import { QueueFullError } from "../store/errors.js";
import { describeError } from "../server/tools/results.js";
import { tempDataDir } from "./support/helpers.js";
import { mountTmpfs, unmount } from "./support/tmpfs.js";

let dataDir: string;
let outside: string;
let cleanup: () => Promise<void>;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  outside = await mkdtemp(join(tmpdir(), "backchannel-outside-"));
});
after(async () => {
  await cleanup();
  await rm(outside, { recursive: true, force: true });
});

function storeWithWarnings(dir = dataDir, limits = {}) {
  const warnings: string[] = [];
  return { store: new FileStore({ dataDir: dir, limits, warn: (message) => warnings.push(message) }), warnings };
}

describe("foreign files where the store's own belong", () => {
  test("a symbolic link planted as a queue file is moved aside, never followed", async () => {
    const { store, warnings } = storeWithWarnings();
    await store.append("planted-link", "ui", "e");
    const target = join(outside, "target.json");
    const secret = JSON.stringify({ version: 1, next_seq: 5, messages: [] });
    await writeFile(target, secret);
    const path = queueFile(dataDir, "planted-link", "ui");
    await rm(path);
    await symlink(target, path);

    // peek only looks: it reports the link (never reading through it) and leaves the repair to the next write.
    await assert.rejects(store.peek("planted-link", "ui"), /it is a symbolic link/);
    const { seq } = await store.append("planted-link", "ui", "e", { ok: true });
    assert.ok(seq >= 2);
    assert.equal(await readFile(target, "utf8"), secret, "the link's target is untouched");
    assert.ok((await lstat(path)).isFile(), "the queue is a real file again");
    const aside = (await readdir(channelDir(dataDir, "planted-link"))).find((name) => name.startsWith("ui.json.corrupt-"));
    assert.ok(aside);
    assert.equal(await readlink(join(channelDir(dataDir, "planted-link"), aside)), target, "the link itself was moved aside");
    assert.match(warnings.join("\n"), /symbolic link/);
  });

  test("a file in place of a channel folder is moved aside and the channel works again", async () => {
    const { store, warnings } = storeWithWarnings();
    await mkdir(channelsDir(dataDir), { recursive: true });
    await writeFile(channelDir(dataDir, "file-folder"), "not a folder");
    assert.equal((await store.append("file-folder", "agent", "ask")).seq, 1);
    assert.ok((await lstat(channelDir(dataDir, "file-folder"))).isDirectory());
    assert.match(warnings.join("\n"), /file-folder should be a folder but was a file: moved it aside/);
    assert.ok((await readdir(channelsDir(dataDir))).some((name) => name.startsWith("file-folder.foreign-")));
  });

  test("a channel folder that is a link out of the data directory is moved aside, never written through", async () => {
    const { store } = storeWithWarnings();
    const elsewhere = join(outside, "elsewhere");
    await mkdir(elsewhere);
    await mkdir(channelsDir(dataDir), { recursive: true });
    await symlink(elsewhere, channelDir(dataDir, "link-folder"));
    await store.append("link-folder", "ui", "e");
    await store.updateState("link-folder", "doc", () => ({ text: "x" }));
    assert.deepEqual(await readdir(elsewhere), [], "nothing written outside the data directory");
    assert.ok((await lstat(channelDir(dataDir, "link-folder"))).isDirectory());
  });

  test("a state file that is a link is not read through", async () => {
    const { store } = storeWithWarnings();
    await store.updateState("state-link", "doc", () => ({ mine: true }));
    const target = join(outside, "secret.json");
    await writeFile(target, JSON.stringify({ secret: true }));
    await rm(stateFile(dataDir, "state-link", "doc"));
    await symlink(target, stateFile(dataDir, "state-link", "doc"));
    assert.equal(await store.readState("state-link", "doc"), null);
    await store.updateState("state-link", "doc", () => ({ mine: 2 }));
    assert.deepEqual(JSON.parse(await readFile(target, "utf8")), { secret: true });
    assert.deepEqual(await store.readState("state-link", "doc"), { mine: 2 });
  });
});

describe("disk trouble (a real tmpfs)", () => {
  const canMount = process.platform === "linux" && process.getuid?.() === 0;
  const reason = "needs root on Linux to mount a tmpfs";

  test("a full disk fails the write with a clear error and keeps the previous queue file", { skip: !canMount && reason }, async () => {
    const at = mountTmpfs("256k");
    if (!at) return assert.fail("could not mount a tmpfs although running as root");
    try {
      const { store } = storeWithWarnings(at);
      await store.append("full-disk", "ui", "e", { n: 1 });
      const before = await readFile(queueFile(at, "full-disk", "ui"), "utf8");
      // Fill what is left.
      await writeFile(join(at, "filler"), Buffer.alloc(1024)).catch(() => undefined);
      for (let i = 0; ; i++) {
        try {
          await writeFile(join(at, `filler-${i}`), Buffer.alloc(16 * 1024));
        } catch {
          break;
        }
      }
      const error = await store.append("full-disk", "ui", "e", { text: "y".repeat(20_000) }).then(
        () => assert.fail("the append should fail on a full disk"),
        (failure: unknown) => failure,
      );
      assert.equal((error as NodeJS.ErrnoException).code, "ENOSPC");
      assert.equal(describeError(error).code, "FILE_SYSTEM");
      assert.match(describeError(error).message, /ENOSPC\): the disk is full; free some space/);
      assert.equal(await readFile(queueFile(at, "full-disk", "ui"), "utf8"), before, "the previous queue file is intact");
      assert.deepEqual(
        (await readdir(channelDir(at, "full-disk"))).filter((name) => name.endsWith(".tmp")),
        [],
        "no temp file left",
      );
    } finally {
      unmount(at);
    }
  });

  test("a read-only data directory fails the write with a clear error and keeps the queue", { skip: !canMount && reason }, async () => {
    const at = mountTmpfs("1m");
    if (!at) return assert.fail("could not mount a tmpfs although running as root");
    try {
      const { store } = storeWithWarnings(at);
      await store.append("read-only", "ui", "e", { n: 1 });
      const before = await readFile(queueFile(at, "read-only", "ui"), "utf8");
      execFileSync("mount", ["-o", "remount,ro", at]);
      const error = await store.append("read-only", "ui", "e").then(
        () => assert.fail("the append should fail on a read-only disk"),
        (failure: unknown) => failure,
      );
      assert.equal((error as NodeJS.ErrnoException).code, "EROFS");
      assert.match(describeError(error).message, /EROFS\): the data directory is not writable/);
      assert.equal(await readFile(queueFile(at, "read-only", "ui"), "utf8"), before);
      assert.deepEqual(
        (await store.poll("read-only", "ui", { after: 0 })).messages.map((m) => m.data),
        [{ n: 1 }],
        "reading still works",
      );
    } finally {
      unmount(at);
    }
  });
});

describe("permissions and ids", () => {
  test("the data directory and channel folders are 0700, queue and state files 0600", { skip: process.platform === "win32" }, async () => {
    const { dir, cleanup: done } = await tempDataDir();
    try {
      const home = join(dir, "home");
      const { store } = storeWithWarnings(home);
      await store.append("perms", "ui", "e");
      await store.updateState("perms", "doc", () => ({}));
      for (const folder of [home, channelsDir(home), channelDir(home, "perms")]) {
        assert.equal((await stat(folder)).mode & 0o777, 0o700, folder);
      }
      for (const file of [queueFile(home, "perms", "ui"), stateFile(home, "perms", "doc")]) {
        assert.equal((await stat(file)).mode & 0o777, 0o600, file);
      }
    } finally {
      await done();
    }
  });

  test("minted channel ids carry at least 64 random bits", () => {
    const ids = Array.from({ length: 2000 }, () => mintChannelId());
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) {
      const match = /^ch-[0-9a-z]+-([0-9a-f]+)$/.exec(id);
      assert.ok(match, id);
      assert.ok(match[1]!.length * 4 >= 64, `${match[1]!.length * 4} random bits in ${id}`);
    }
  });
});

describe("flooding", () => {
  test("a channel at its queue limit does not slow the others, and tells the writer the reader is not reading", { timeout: 120_000 }, async (t) => {
    const limits = { maxQueueMessages: 20 };
    const { store } = storeWithWarnings(dataDir, limits);
    for (let n = 0; n < 20; n++) await store.append("flooded", "agent", "e", { n });
    await assert.rejects(store.append("flooded", "agent", "e"), (error: unknown) => {
      assert.ok(error instanceof QueueFullError);
      assert.match(error.message, /full \(20 messages\): the agent is not reading it.*wait until the agent polls/);
      return true;
    });

    const appendTimes = async (count: number) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        await store.append("quiet", "ui", "e", { i });
        times.push(performance.now() - started);
        await store.poll("quiet", "ui");
      }
      return times.sort((a, b) => a - b)[Math.floor(count / 2)]!;
    };
    const quietAlone = await appendTimes(60);

    // Another process hammers the full channel as fast as it can.
    const flooder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { FileStore } from ${JSON.stringify(new URL("../store/file/file-store.js", import.meta.url).href)};
         const store = new FileStore({ dataDir: ${JSON.stringify(dataDir)}, limits: { maxQueueMessages: 20 } });
         let refused = 0;
         process.stdout.write("flooding\\n");
         for (;;) { try { await store.append("flooded", "agent", "e"); } catch { refused++; } }`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve) => flooder.stdout.once("data", () => resolve()));
      const quietFlooded = await appendTimes(60);
      t.diagnostic(`median append to a quiet channel: ${quietAlone.toFixed(2)} ms alone, ${quietFlooded.toFixed(2)} ms next to a flooded one`);
      // Loose: the flooder takes a core of a small machine, but it never takes the quiet channel's lock.
      assert.ok(quietFlooded < Math.max(5 * quietAlone, 20), `${quietFlooded.toFixed(2)} ms vs ${quietAlone.toFixed(2)} ms`);
      assert.equal((await store.peek("flooded", "agent")).length, 20, "the flooded queue kept exactly what it had");
    } finally {
      // SIGKILL: the flooder's loop never yields to the event loop, where a SIGTERM handler would run.
      flooder.kill("SIGKILL");
      await new Promise((resolve) => flooder.once("exit", resolve));
    }
  });
});
