/**
 * `backchannel install statusline` / `uninstall statusline` on sample Claude Code
 * settings files, through the real command: what was there is kept (other keys and
 * their order, the replaced status line, which still shows first), uninstall gives it
 * back exactly, and a file that is not a settings object is never overwritten.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { FileStore } from "../store/file/file-store.js";
import { withChannel } from "../store/session-record.js";
import { mkfifo } from "./support/fifo.js";
import { type Outcome, runAtOnce } from "./support/at-once.js";
import { CLI, standInHost, tempDataDir } from "./support/helpers.js";

/** A settings file as people write them: 2-space indentation, a trailing newline, a status line of their own. */
const WITH_STATUS_LINE = `{
  "model": "opus",
  "statusLine": {
    "type": "command",
    "command": "printf 'their line'",
    "padding": 1,
    "refreshInterval": 10
  },
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  }
}
`;

/** The command prefix install writes: this node and this checkout's CLI. */
const COMMAND = `${process.execPath} ${CLI}`;

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(() => cleanup());

/** Runs `backchannel ...args` with `env` added (undefined removes a variable). */
function cli(args: string[], env: Record<string, string | undefined> = {}) {
  const full: NodeJS.ProcessEnv = { ...process.env, BACKCHANNEL_COMMAND: COMMAND, ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete full[name];
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: full, timeout: 10_000 });
}

function install(settings: string, env: Record<string, string | undefined> = {}) {
  return cli(["install", "statusline", "--settings", settings], env);
}

function uninstall(settings: string, env: Record<string, string | undefined> = {}) {
  return cli(["uninstall", "statusline", "--settings", settings], env);
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
}

/** The stash install keeps next to `settings` (`<folder>/backchannel-statusline.settings.json`). */
function stashOf(folder: string, name = "settings.json"): string {
  return join(folder, `backchannel-statusline.${name}`);
}

/** The statusLine install writes for the settings file in `folder`. */
function ours(folder: string, extra: Record<string, number> = {}) {
  return { type: "command", command: `${COMMAND} statusline --stash ${stashOf(folder)}`, ...extra };
}

test("a missing settings file is created, with the .claude folder of an existing project, and removed again by uninstall", async () => {
  await mkdir(join(dir, "project"));
  const folder = join(dir, "project", ".claude");
  const settings = join(folder, "settings.json");
  const installed = install(settings);
  assert.equal(installed.status, 0, installed.stderr);
  assert.match(
    installed.stdout,
    /^Installed backchannel's status line in .*settings\.json \(there was none before\)\.\nClaude Code shows it at its next status line refresh/,
  );
  assert.deepEqual(await readJson(settings), { statusLine: ours(folder, { refreshInterval: 5 }) });
  assert.deepEqual(await readJson(stashOf(folder)), { settings, settings_existed: false });

  const removed = uninstall(settings);
  assert.equal(removed.status, 0, removed.stderr);
  assert.match(removed.stdout, /^Removed .*settings\.json, which install had created\.\n$/);
  assert.equal(existsSync(settings), false);
  assert.equal(existsSync(stashOf(folder)), false);
});

test("an existing statusLine is stashed, still shows first, and comes back byte for byte", async () => {
  const settings = join(dir, "settings.json");
  await writeFile(settings, WITH_STATUS_LINE);
  await chmod(settings, 0o644);
  const installed = install(settings);
  assert.equal(installed.status, 0, installed.stderr);
  assert.match(installed.stdout, /it runs the previous one first, kept in .*backchannel-statusline\.settings\.json/);

  const now = await readJson(settings);
  assert.deepEqual(Object.keys(now), ["model", "statusLine", "permissions"]);
  assert.deepEqual(now.statusLine, ours(dir, { padding: 1, refreshInterval: 10 }));
  assert.deepEqual((await readJson(stashOf(dir))).statusLine, JSON.parse(WITH_STATUS_LINE).statusLine);
  assert.equal((await stat(settings)).mode & 0o777, 0o644, "the file keeps its permissions");

  // The installed command, run through the shell as Claude Code runs it, shows theirs then ours.
  const dataDir = join(dir, "data");
  const store = new FileStore({ dataDir });
  const host = standInHost();
  await store.sessions.update(host.key, (record) => withChannel(record, { id: "r-1", app: "reader" }));
  await store.append("r-1", "agent", "ask", { text: "why?" });
  const shown = await runShell((now.statusLine as { command: string }).command, { BACKCHANNEL_HOME: dataDir, ...host.env }, '{"session_id":"s"}');
  assert.equal(shown, "their line | reader: 1 question\n");

  const removed = uninstall(settings);
  assert.equal(removed.status, 0, removed.stderr);
  assert.match(removed.stdout, /put the previous one back/);
  assert.equal(await readFile(settings, "utf8"), WITH_STATUS_LINE);
  assert.equal(existsSync(stashOf(dir)), false);
});

test("without a statusLine, the other keys and their order are kept, and uninstall gives the same object back", async () => {
  const settings = join(dir, "settings.json");
  const original = { theme: "dark", env: { A: "1" }, hooks: { PostToolUse: [] }, includeCoAuthoredBy: false };
  await writeFile(settings, JSON.stringify(original));
  assert.equal(install(settings).status, 0);
  const now = await readJson(settings);
  assert.deepEqual(Object.keys(now), ["theme", "env", "hooks", "includeCoAuthoredBy", "statusLine"]);
  assert.deepEqual(now.statusLine, ours(dir, { refreshInterval: 5 }));
  assert.match(
    await readFile(settings, "utf8"),
    /^\{\n {2}"theme": "dark",\n {2}"env": \{\n {4}"A": "1"\n {2}\},[\s\S]*\n\}\n$/,
    "2-space indentation, trailing newline",
  );

  const removed = uninstall(settings);
  assert.equal(removed.status, 0, removed.stderr);
  assert.match(removed.stdout, /there was none before/);
  const back = await readJson(settings);
  assert.deepEqual(back, original);
  assert.deepEqual(Object.keys(back), Object.keys(original));
});

test("installing twice changes nothing and never stashes our own command", async () => {
  const settings = join(dir, "settings.json");
  await writeFile(settings, WITH_STATUS_LINE);
  assert.equal(install(settings).status, 0);
  const [settingsBefore, stashBefore] = await Promise.all([readFile(settings, "utf8"), readFile(stashOf(dir), "utf8")]);
  const again = install(settings);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /already installed .*nothing changed/);
  assert.equal(await readFile(settings, "utf8"), settingsBefore);
  assert.equal(await readFile(stashOf(dir), "utf8"), stashBefore);
  // Installed under another command prefix (npx instead of node): still ours.
  const otherPrefix = install(settings, { BACKCHANNEL_COMMAND: "npx backchannel" });
  assert.match(otherPrefix.stdout, /already installed/);
  assert.equal(await readFile(stashOf(dir), "utf8"), stashBefore);
});

test("uninstall when not installed says so, exits 0, and creates nothing", async () => {
  const missing = join(dir, "missing", "settings.json");
  const none = uninstall(missing);
  assert.equal(none.status, 0, none.stderr);
  assert.match(none.stdout, /not installed .*nothing changed/);
  assert.equal(existsSync(join(dir, "missing")), false);

  const settings = join(dir, "settings.json");
  await writeFile(settings, WITH_STATUS_LINE);
  const theirs = uninstall(settings);
  assert.equal(theirs.status, 0);
  assert.match(theirs.stdout, /not installed/);
  assert.equal(await readFile(settings, "utf8"), WITH_STATUS_LINE);
});

test("uninstall refuses, changing nothing, when the user replaced the statusLine since install", async () => {
  const settings = join(dir, "settings.json");
  await writeFile(settings, WITH_STATUS_LINE);
  assert.equal(install(settings).status, 0);
  const replaced = { ...(await readJson(settings)), statusLine: { type: "command", command: "my-new-status-line" } };
  await writeFile(settings, JSON.stringify(replaced));
  const [settingsBefore, stashBefore] = await Promise.all([readFile(settings, "utf8"), readFile(stashOf(dir), "utf8")]);

  const refused = uninstall(settings);
  assert.equal(refused.status, 1);
  assert.equal(refused.stdout, "");
  assert.match(
    refused.stderr,
    /statusLine in .*settings\.json is no longer backchannel's .*nothing was changed.*backchannel-statusline\.settings\.json/,
  );
  assert.equal(await readFile(settings, "utf8"), settingsBefore);
  assert.equal(await readFile(stashOf(dir), "utf8"), stashBefore);
});

test("uninstall cleans up after an uninstall that stopped between its two writes", async () => {
  const settings = join(dir, "settings.json");
  await writeFile(settings, WITH_STATUS_LINE);
  assert.equal(install(settings).status, 0);
  // As if uninstall had restored settings.json and died before removing the stash.
  await writeFile(settings, WITH_STATUS_LINE);
  const result = uninstall(settings);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /already back .*removed the leftover/);
  assert.equal(existsSync(stashOf(dir)), false);
  assert.equal(await readFile(settings, "utf8"), WITH_STATUS_LINE);
});

describe("a settings file that is not a settings object is refused, exit 1, and left byte for byte", () => {
  const cases: [string, string, RegExp][] = [
    ["not JSON", '{ "model": "opus", }\n', /it is not JSON/],
    ["an array", "[1, 2]\n", /it holds an array, not a JSON object/],
    ["null", "null\n", /it holds null, not a JSON object/],
    ["a statusLine that is not an object", '{"statusLine": "echo hi"}\n', /its statusLine is "echo hi", not an object/],
  ];
  for (const [name, text, problem] of cases) {
    test(name, async () => {
      const settings = join(dir, "settings.json");
      await writeFile(settings, text);
      for (const result of [install(settings), uninstall(settings)]) {
        assert.equal(result.status, 1);
        assert.equal(result.stdout, "");
        assert.ok(result.stderr.includes(settings), result.stderr);
        assert.match(result.stderr, problem);
        assert.match(result.stderr, /nothing was changed/);
      }
      assert.equal(await readFile(settings, "utf8"), text);
      assert.equal(existsSync(stashOf(dir)), false);
    });
  }
});

test("install statusline and install hook refuse a settings file in a folder that does not exist, and make no folder", async () => {
  const cases: [string, RegExp][] = [
    [join(dir, "nonexistent", "dir", "settings.json"), /the folder .*nonexistent\/dir does not exist: check the path \(nothing was changed\)/],
    // A mistyped .claude in an existing project, and a .claude folder of a project that does not exist.
    [join(dir, ".cluade", "settings.json"), /the folder .*\.cluade does not exist/],
    [join(dir, "no-project", ".claude", "settings.json"), /the folder .*no-project\/\.claude does not exist/],
    // A part of the way that is a file, not a folder.
    [join(dir, "a-file", ".claude", "settings.json"), /the folder .*a-file\/\.claude does not exist/],
  ];
  await writeFile(join(dir, "a-file"), "");
  for (const [settings, expected] of cases) {
    for (const target of ["statusline", "hook"]) {
      const result = cli(["install", target, "--settings", settings]);
      assert.equal(result.status, 1, `${target} ${settings}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^backchannel install ${target}: `));
      assert.match(result.stderr, expected);
      assert.match(result.stderr, /Claude Code reads .*settings\.json/);
      assert.equal(result.stdout, "");
    }
  }
  assert.deepEqual((await readdir(dir)).sort(), ["a-file"], "no folder was made");
  // A folder in the way that is a file.
  const refused = cli(["install", "hook", "--settings", join(dir, "a-file", "settings.json")]);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /a-file is not a folder, so .* cannot be a settings file/);
});

test("the default settings file is $CLAUDE_CONFIG_DIR/settings.json", async () => {
  const config = join(dir, "config");
  const env = { CLAUDE_CONFIG_DIR: config };
  const installed = cli(["install", "statusline"], env);
  assert.equal(installed.status, 0, installed.stderr);
  assert.ok(installed.stdout.includes(join(config, "settings.json")), installed.stdout);
  assert.deepEqual(await readJson(join(config, "settings.json")), { statusLine: ours(config, { refreshInterval: 5 }) });
  assert.equal(cli(["uninstall", "statusline"], env).status, 0);
  assert.equal(existsSync(join(config, "settings.json")), false);
});

test("a settings file that is a symbolic link is written through, and stays a link", async () => {
  const dotfiles = join(dir, "dotfiles");
  const folder = join(dir, "claude");
  await mkdir(dotfiles);
  await mkdir(folder);
  await writeFile(join(dotfiles, "settings.json"), WITH_STATUS_LINE);
  const settings = join(folder, "settings.json");
  await symlink(join(dotfiles, "settings.json"), settings);
  assert.equal(install(settings).status, 0);
  assert.equal(await readlink(settings), join(dotfiles, "settings.json"));
  assert.deepEqual((await readJson(join(dotfiles, "settings.json"))).statusLine, ours(folder, { padding: 1, refreshInterval: 10 }));
  assert.equal(uninstall(settings).status, 0);
  assert.equal(await readFile(join(dotfiles, "settings.json"), "utf8"), WITH_STATUS_LINE);
});

describe("concurrent installs and uninstalls", () => {
  const ROUNDS = 3;
  const PROCESSES = 50;

  /** Runs `PROCESSES` installs and uninstalls of `settings` at once; resolves with their exit codes and stderr. */
  function race(settings: string, round: number): Promise<Outcome[]> {
    const runs = Array.from({ length: PROCESSES }, (_, i) => [CLI, i % 2 === 0 ? "install" : "uninstall", "statusline", "--settings", settings]);
    return runAtOnce(runs, { ...process.env, BACKCHANNEL_COMMAND: COMMAND }, join(dir, `start-${round}`));
  }

  test(`${PROCESSES} at once, ${ROUNDS} times: each succeeds, and the user's status line is always in settings.json or the stash`, async () => {
    const theirs = { type: "command", command: "printf 'their line'" };
    for (let round = 0; round < ROUNDS; round++) {
      const settings = join(dir, `race-${round}`, "settings.json");
      await mkdir(join(dir, `race-${round}`));
      await writeFile(settings, `${JSON.stringify({ model: "opus", statusLine: theirs }, null, 2)}\n`);
      const outcomes = await race(settings, round);
      for (const outcome of outcomes) assert.equal(outcome.code, 0, outcome.stderr);
      const after = await readJson(settings);
      const stash = join(dir, `race-${round}`, "backchannel-statusline.settings.json");
      if (existsSync(stash)) {
        assert.deepEqual(after.statusLine, ours(join(dir, `race-${round}`), { refreshInterval: 5 }), `round ${round}: stash without our line`);
        assert.deepEqual((await readJson(stash)).statusLine, theirs, `round ${round}: the stash lost their status line`);
      } else {
        assert.deepEqual(after.statusLine, theirs, `round ${round}: their status line is gone, and there is no stash`);
      }
      assert.equal(after.model, "opus");
    }
  });
});

test("a settings file or stash that is a named pipe is refused, not waited on", async () => {
  const settings = join(dir, "settings.json");
  await mkfifo(settings);
  for (const result of [install(settings), uninstall(settings)]) {
    assert.equal(result.signal, null, "it hung on the named pipe");
    assert.equal(result.status, 1);
    assert.match(result.stderr, /settings\.json: it is not a regular file/);
  }
  const other = join(dir, "other.json");
  await writeFile(other, WITH_STATUS_LINE);
  assert.equal(install(other).status, 0);
  const stash = stashOf(dir, "other.json");
  await rm(stash);
  await mkfifo(stash);
  const result = uninstall(other);
  assert.equal(result.signal, null, "uninstall hung on a named pipe stash");
  assert.equal(result.status, 1);
  assert.match(result.stderr, /backchannel-statusline\.other\.json.*not a regular file/);
});

test("install hook adds the wake hook beside the user's other hooks, once; uninstall takes only it out", async () => {
  const settings = join(dir, "hooks.json");
  const theirs = { matcher: "", hooks: [{ type: "command", command: "echo theirs" }] };
  await writeFile(settings, JSON.stringify({ model: "x", hooks: { Stop: [theirs], PreToolUse: [theirs] } }));
  const first = cli(["install", "hook", "--settings", settings]);
  assert.equal(first.status, 0, first.stderr);
  assert.equal(cli(["install", "hook", "--settings", settings]).status, 0);
  const installed = (await readJson(settings)) as { model: string; hooks: { Stop: unknown[]; PreToolUse: unknown[] } };
  assert.equal(installed.model, "x");
  assert.deepEqual(installed.hooks.PreToolUse, [theirs]);
  assert.deepEqual(installed.hooks.Stop, [
    theirs,
    { hooks: [{ type: "command", command: `${COMMAND} hook stop`, asyncRewake: true, timeout: 604800 }] },
  ]);
  assert.equal(cli(["uninstall", "hook", "--settings", settings]).status, 0);
  assert.deepEqual(await readJson(settings), { model: "x", hooks: { Stop: [theirs], PreToolUse: [theirs] } });
  await writeFile(settings, JSON.stringify({ hooks: { Stop: "not an array" } }));
  const refused = cli(["install", "hook", "--settings", settings]);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /hooks\.Stop is "not an array", not an array/);
});

test("an unknown target or a missing one is refused with exit 1; --help exits 0", () => {
  for (const args of [["install", "foo"], ["uninstall"], ["install", "statusline", "extra"]]) {
    const result = cli(args);
    assert.equal(result.status, 1, args.join(" "));
    assert.match(result.stderr, /can only (un)?install "statusline"/);
  }
  const help = cli(["install", "--help"]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: backchannel install statusline/);
});

/** Runs `command` through the shell as Claude Code runs a status line; resolves to its stdout. */
function runShell(command: string, env: Record<string, string>, input: string): Promise<string> {
  const child = spawn(command, { shell: true, env: { ...process.env, ...env } });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on("close", () => resolve(stdout)));
}
