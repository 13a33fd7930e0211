/**
 * Power cuts right after an answer, on a real ext4 file system on a loop device
 * (test/support/ext4-cut.ts): whatever a command or a server acknowledged is on the
 * disk the cut leaves, the names its creates and renames made included (the file and
 * its folder fsynced before the answer: core/fs/durable.ts).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { channelDir } from "../core/paths.js";
import { FileQueueReader } from "../store/file/queue-reader.js";
import { CLI, connectServer, structured } from "./support/helpers.js";
import { type Ext4Disk, ext4CutSkip, makeExt4Disk } from "./support/ext4-cut.js";

/** Runs `backchannel ...args` to its end. */
function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 30_000 });
}

/** Makes everything on the file system at `at` durable: the state before the command under test. */
function syncFileSystem(at: string): void {
  const synced = spawnSync("sync", ["--file-system", at]);
  assert.equal(synced.status, 0, "sync --file-system");
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
}

/** The channels named by every session record in the data directory `dataDir`. */
async function sessionChannels(dataDir: string): Promise<string[]> {
  const folder = join(dataDir, "sessions");
  if (!existsSync(folder)) return [];
  const channels: string[] = [];
  for (const name of await readdir(folder)) {
    if (!name.endsWith(".json")) continue;
    const record = (await readJson(join(folder, name))) as { channels?: { id: string }[] };
    channels.push(...(record.channels ?? []).map((channel) => channel.id));
  }
  return channels;
}

describe("a power cut right after an answer (ext4 on a loop device)", { skip: ext4CutSkip() }, () => {
  let disk: Ext4Disk;
  let dataDir: string;
  beforeEach(async () => {
    disk = await makeExt4Disk();
    dataDir = join(disk.at, "data");
  });
  afterEach(() => disk.close());

  test("token add: the printed token is in the token file", { timeout: 60_000 }, async () => {
    const added = cli(["token", "add", "alice"], { BACKCHANNEL_HOME: dataDir });
    assert.equal(added.status, 0, added.stderr);
    const token = added.stdout.trim().split(/\s+/).at(-1)!;
    const cut = disk.cut();
    const tokensFile = join(cut, "data", "tokens.json");
    assert.ok(existsSync(tokensFile), `tokens.json is on the disk after the cut (found: ${(await readdir(join(cut, "data"))).join(", ")})`);
    const { tokens } = (await readJson(tokensFile)) as { tokens: { sha256: string }[] };
    assert.ok(
      tokens.some((entry) => entry.sha256 === createHash("sha256").update(token).digest("hex")),
      "the printed token is in the file",
    );
  });

  test("install statusline and install hook: the settings hold what was installed", { timeout: 60_000 }, async () => {
    const settings = join(disk.at, "claude", "settings.json");
    await mkdir(join(disk.at, "claude"));
    await writeFile(settings, `${JSON.stringify({ theme: "dark" })}\n`);
    syncFileSystem(disk.at);

    const statusline = cli(["install", "statusline", "--settings", settings], { BACKCHANNEL_HOME: dataDir });
    assert.equal(statusline.status, 0, statusline.stderr);
    assert.match(statusline.stdout, /Installed/);
    const afterStatusline = await readJson(join(disk.cut(), "claude", "settings.json"));
    assert.ok(afterStatusline.statusLine, `the status line is in the settings after the cut: ${JSON.stringify(afterStatusline)}`);

    const hook = cli(["install", "hook", "--settings", settings], { BACKCHANNEL_HOME: dataDir });
    assert.equal(hook.status, 0, hook.stderr);
    assert.match(hook.stdout, /Installed/);
    const afterHook = await readJson(join(disk.cut(), "claude", "settings.json"));
    assert.ok(
      (afterHook.hooks as { Stop?: unknown } | undefined)?.Stop,
      `the wake hook is in the settings after the cut: ${JSON.stringify(afterHook)}`,
    );
  });

  describe("through a server", () => {
    let agent: Client;
    beforeEach(async () => {
      agent = await connectServer(dataDir, { CLAUDE_PID: "4343" });
    });
    afterEach(() => agent.close());

    test("open_app and save_app: the channel's app, the session's record and the saved app are there", { timeout: 60_000 }, async () => {
      const opened = await agent.callTool({ name: "open_app", arguments: { html: "<p>kept</p>", title: "Kept" } });
      assert.ok(!opened.isError, JSON.stringify(opened.content));
      const channelId = structured<{ channel_id: string }>(opened).channel_id;
      const afterOpen = disk.cut();
      const appState = join(channelDir(join(afterOpen, "data"), channelId), "state.app.json");
      assert.ok(existsSync(appState), "the channel's app is on the disk after the cut");
      assert.deepEqual(await sessionChannels(join(afterOpen, "data")), [channelId], "the session's record names the channel after the cut");

      const saved = await agent.callTool({ name: "save_app", arguments: { channel_id: channelId, name: "kept", description: "a test app" } });
      assert.ok(!saved.isError, JSON.stringify(saved.content));
      assert.match(JSON.stringify(saved.content), /Saved/);
      const afterSave = disk.cut();
      assert.ok(existsSync(join(afterSave, "data", "apps", "kept.json")), "the saved app is on the disk after the cut");
    });

    test("a read-and-clear that compacts the queue: what it returned does not come back", { timeout: 60_000 }, async () => {
      const channelId = "compacted";
      const text = "x".repeat(3000);
      for (let n = 1; n <= 40; n++) {
        const sent = await agent.callTool({ name: "notify_agent", arguments: { channel_id: channelId, event: "ask", data: { n, text } } });
        assert.ok(!sent.isError, JSON.stringify(sent.content));
      }
      // 120 KB read and cleared at once: the dead records pass the compaction slack, so the log is replaced.
      const read = await agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId } });
      assert.equal(structured<{ messages: unknown[] }>(read).messages.length, 40);
      const cut = disk.cut();
      const back = (await new FileQueueReader(join(cut, "data")).peek(channelId, "agent")).map((message) => message.seq);
      assert.deepEqual(back, [], `messages read and cleared before the cut come back after it: ${back.join(", ")}`);
    });

    test("the first message of a new channel is there", { timeout: 60_000 }, async () => {
      const sent = await agent.callTool({ name: "notify_ui", arguments: { channel_id: "fresh", event: "hello", data: {} } });
      assert.ok(!sent.isError, JSON.stringify(sent.content));
      const cut = disk.cut();
      const kept = (await new FileQueueReader(join(cut, "data")).peek("fresh", "ui")).map((message) => message.seq);
      assert.deepEqual(kept, [1]);
    });
  });
});
