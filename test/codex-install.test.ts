/**
 * `backchannel install codex` and `uninstall codex` against the real Codex CLI's own
 * configuration (its app server reads and writes config.toml, and says which hooks it
 * trusts): one step adds the MCP server and a trusted wake hook; again changes nothing;
 * uninstall gives back the user's files as they were, byte for byte; the user's own
 * hooks, trust, comments and server entry survive; two installs at once add one hook.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { openAppServer } from "../codex/app-server.js";
import { codexBinary, codexBinDir, codexSkipReason } from "./support/codex/session.js";
import { CLI } from "./support/helpers.js";

const skip = codexSkipReason();

/** The user's config.toml before install: comments, a server of their own, their hook's trust. */
const USER_CONFIG = `# my Codex settings
model = "o4-mini" # the one I like

[mcp_servers.notes]
command = "notes-server"
args = ["--quiet"]

[hooks.state."HOOKS:stop:0:0"]
trusted_hash = "sha256:mine"
`;

/** The user's hooks.json before install. */
const USER_HOOKS = {
  hooks: {
    Stop: [{ hooks: [{ type: "command", command: "say done", timeout: 5 }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "audit-bash" }] }],
  },
};

describe("backchannel install codex, in Codex's own configuration", { skip }, () => {
  let root: string;
  let codexHome: string;
  let env: Record<string, string>;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "backchannel-codex-install-"));
  });
  after(() => rm(root, { recursive: true, force: true }));

  /** A fresh CODEX_HOME holding the user's files. */
  async function userHome(name: string, config = USER_CONFIG): Promise<void> {
    codexHome = join(root, name, ".codex");
    await mkdir(codexHome, { recursive: true });
    await writeFile(join(codexHome, "config.toml"), config.replace("HOOKS", join(codexHome, "hooks.json")));
    await writeFile(join(codexHome, "hooks.json"), `${JSON.stringify(USER_HOOKS, null, 2)}\n`);
    env = { ...(process.env as Record<string, string>), HOME: join(root, name), CODEX_HOME: codexHome, PATH: `${codexBinDir()}:${process.env.PATH}` };
    delete env.BACKCHANNEL_HOME;
  }

  function backchannel(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { env });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Codex's own view: every hook it finds for this home, with its trust. */
  async function codexHooks(): Promise<{ command?: string; trustStatus: string }[]> {
    const codex = await openAppServer([codexBinary()], env);
    try {
      const listed = await codex.request<{ data: { hooks: { command?: string; trustStatus: string }[] }[] }>("hooks/list", { cwds: [root] });
      return listed.data.flatMap((entry) => entry.hooks);
    } finally {
      await codex.close();
    }
  }

  const files = async () => ({
    config: await readFile(join(codexHome, "config.toml"), "utf8"),
    hooks: await readFile(join(codexHome, "hooks.json"), "utf8"),
  });

  test("one step adds a trusted wake hook and the server; again changes nothing; uninstall gives the files back", { timeout: 120_000 }, async () => {
    await userHome("plain");
    const before = await files();
    const installed = await backchannel("install", "codex");
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /added the wake hook.*Codex now trusts it.*added the MCP server "backchannel"/s);
    const once = await files();
    assert.ok(once.config.startsWith('# my Codex settings\nmodel = "o4-mini" # the one I like\n'), `comments kept:\n${once.config}`);
    assert.match(once.config, /\[mcp_servers\.notes\]/);
    assert.match(once.config, /trusted_hash = "sha256:mine"/);
    assert.match(once.config, /\[mcp_servers\.backchannel\]\ncommand = "node"\nargs = \[".*main\.js", "serve", "--wake", "hook"\]/);
    const hooks = JSON.parse(once.hooks) as typeof USER_HOOKS;
    assert.deepEqual(hooks.hooks.PreToolUse, USER_HOOKS.hooks.PreToolUse);
    assert.deepEqual(hooks.hooks.Stop[0], USER_HOOKS.hooks.Stop[0], "the user's Stop hook first, as it was");
    assert.equal(hooks.hooks.Stop.length, 2);
    const listed = await codexHooks();
    const ours = listed.filter((hook) => hook.command?.endsWith("hook codex-stop"));
    assert.deepEqual(
      ours.map((hook) => hook.trustStatus),
      ["trusted"],
      "Codex trusts the wake hook (it runs no other)",
    );
    assert.equal(
      listed.find((hook) => hook.command === "say done")?.trustStatus,
      "modified",
      "the user's own hook's trust is as it was (a made-up hash)",
    );

    const again = await backchannel("install", "codex");
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /was in .* already.*trusted it already.*was there already/s);
    assert.deepEqual(await files(), once, "installing again changes nothing");

    const removed = await backchannel("uninstall", "codex");
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /removed the wake hook.*removed the MCP server "backchannel"/s);
    const after = await files();
    assert.equal(
      after.config.replace(/\n\[hooks\.state\]\n/, "\n"),
      before.config,
      "config.toml as it was (Codex may leave an empty [hooks.state] table)",
    );
    assert.deepEqual(JSON.parse(after.hooks), USER_HOOKS, "hooks.json holds the user's hooks, as they were");
  });

  test("a server entry of the user's named backchannel is kept by install and left by uninstall", { timeout: 120_000 }, async () => {
    await userHome(
      "own-server",
      `${USER_CONFIG}\n[mcp_servers.backchannel]\ncommand = "npx"\nargs = ["-y", "backchannel-mcp"]\n\n[mcp_servers.backchannel.env]\nBACKCHANNEL_HOME = "/srv/shared"\n`,
    );
    const installed = await backchannel("install", "codex");
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /kept the MCP server "backchannel" you had/);
    assert.match((await files()).config, /BACKCHANNEL_HOME = "\/srv\/shared"/);
    const removed = await backchannel("uninstall", "codex");
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /left the MCP server "backchannel" alone/);
    assert.match((await files()).config, /command = "npx"[\s\S]*BACKCHANNEL_HOME = "\/srv\/shared"/);
  });

  test("two installs at once add one hook; Codex that cannot run is said, with what was done", { timeout: 120_000 }, async () => {
    await userHome("twice");
    const both = await Promise.all([backchannel("install", "codex"), backchannel("install", "codex")]);
    for (const result of both) assert.equal(result.code, 0, result.stderr);
    const stop = (JSON.parse((await files()).hooks) as typeof USER_HOOKS).hooks.Stop;
    assert.equal(stop.filter((entry) => JSON.stringify(entry).includes("codex-stop")).length, 1, JSON.stringify(stop));

    await userHome("no-codex");
    const missing = await backchannel("install", "codex", "--codex", join(root, "no-such-codex"));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot run .*no-such-codex.*install Codex CLI or pass --codex PATH.*Done before that: added the wake hook/s);
    assert.equal((await files()).config, USER_CONFIG.replace("HOOKS", join(codexHome, "hooks.json")), "config.toml untouched");
  });
});
