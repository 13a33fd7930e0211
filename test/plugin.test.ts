/**
 * The Claude Code plugin as files: its manifests pass the real `claude plugin validate`
 * (the pinned CLI, see test/support/claude-code/), agree with the package (name,
 * version, every recipe a skill), point at nothing outside the plugin folder, and its
 * launcher runs the package it ships in, or, copied alone (as Claude Code's plugin
 * cache holds a marketplace install), the published package of its version.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { chmod, cp, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { WAKE_HOOK_TIMEOUT_S } from "../core/limits.js";
import { claudeBinary, claudeCodeSkipReason } from "./support/claude-code/install.js";
import { tempDataDir } from "./support/helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PLUGIN = join(ROOT, "plugin");
const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8"));

describe("the plugin's files", () => {
  test("plugin.json, marketplace.json and package.json agree: name backchannel, the package's version, ./plugin", async () => {
    const pkg = await readJson(join(ROOT, "package.json"));
    const plugin = await readJson(join(PLUGIN, ".claude-plugin", "plugin.json"));
    const market = await readJson(join(ROOT, ".claude-plugin", "marketplace.json"));
    assert.equal(plugin.name, "backchannel");
    assert.equal(plugin.version, pkg.version);
    assert.deepEqual(
      market.plugins.map((entry: { name: string; source: string; version: string }) => [entry.name, entry.source, entry.version]),
      [["backchannel", "./plugin", pkg.version]],
    );
    assert.ok(pkg.files.includes("plugin"), "the npm package ships plugin/");
  });

  test("the MCP server and the wake hook run the plugin's launcher, nothing outside the plugin folder", async () => {
    const mcp = await readJson(join(PLUGIN, ".mcp.json"));
    // `--wake hook`: the server tells the model that the plugin wakes it, never to arm a watcher.
    assert.deepEqual(mcp.mcpServers.backchannel, {
      command: "node",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own placeholder, substituted by the host
      args: ["${CLAUDE_PLUGIN_ROOT}/scripts/backchannel.mjs", "serve", "--wake", "hook"],
    });
    const hooks = await readJson(join(PLUGIN, "hooks", "hooks.json"));
    const [stop] = hooks.hooks.Stop[0].hooks;
    assert.deepEqual(stop, {
      type: "command",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own placeholder, substituted by the host
      command: 'node "${CLAUDE_PLUGIN_ROOT}/scripts/backchannel.mjs" hook stop',
      asyncRewake: true,
      timeout: WAKE_HOOK_TIMEOUT_S,
    });
    for (const text of [JSON.stringify(mcp), JSON.stringify(hooks)]) assert.doesNotMatch(text, /\.\.\/|"\/(?!\/)/);
  });

  test("every recipe is a skill, and every skill a recipe", async () => {
    const recipes = (await readdir(join(ROOT, "recipes"))).map((name) => name.replace(/\.md$/, "")).sort();
    const skills = (await readdir(join(PLUGIN, "skills"))).sort();
    assert.deepEqual(skills, recipes);
    for (const name of skills) {
      const text = await readFile(join(PLUGIN, "skills", name, "SKILL.md"), "utf8");
      assert.match(text, new RegExp(`^---\\nname: ${name}\\ndescription: "[^"\\n]+"\\n---\\n`));
      assert.ok(text.includes(`read_recipe {"name": "${name}"}`), name);
    }
  });

  test("claude plugin validate passes the plugin and the marketplace", { skip: claudeCodeSkipReason() }, async () => {
    const { dir: home, cleanup } = await tempDataDir();
    try {
      for (const target of [PLUGIN, ROOT]) {
        const { stdout } = await promisify(execFile)(claudeBinary(), ["plugin", "validate", target], {
          env: { PATH: process.env.PATH, HOME: home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
          timeout: 60_000,
        });
        assert.match(stdout, /✔ Validation passed/, stdout);
      }
    } finally {
      await cleanup();
    }
  });
});

describe("the launcher", () => {
  test("inside the package: runs its build, exit code passed through (the hook's 2 included)", async () => {
    const run = await launch(join(PLUGIN, "scripts", "backchannel.mjs"), ["--version"], {});
    const pkg = await readJson(join(ROOT, "package.json"));
    assert.deepEqual([run.code, run.stdout.trim()], [0, pkg.version]);
    const { dir, cleanup } = await tempDataDir();
    try {
      const timedOut = await launch(
        join(PLUGIN, "scripts", "backchannel.mjs"),
        ["hook", "stop", "--timeout", "0.2"],
        { BACKCHANNEL_HOME: dir },
        "{}",
      );
      assert.equal(timedOut.code, 2, timedOut.stderr);
    } finally {
      await cleanup();
    }
  });

  test("copied alone (a marketplace install): runs the published package of its version through npx", async () => {
    const { dir, cleanup } = await tempDataDir();
    try {
      await cp(PLUGIN, join(dir, "cache", "backchannel"), { recursive: true });
      // A stand-in for npx, which would fetch the package: it records its arguments and exits 2.
      await mkdir(join(dir, "bin"));
      await writeFile(join(dir, "bin", "npx"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, "npx-args")}"\nexit 2\n`);
      await chmod(join(dir, "bin", "npx"), 0o755);
      const run = await launch(join(dir, "cache", "backchannel", "scripts", "backchannel.mjs"), ["hook", "stop"], {
        PATH: `${join(dir, "bin")}:${process.env.PATH}`,
      });
      const pkg = await readJson(join(ROOT, "package.json"));
      assert.equal(run.code, 2);
      assert.deepEqual((await readFile(join(dir, "npx-args"), "utf8")).trim().split("\n"), [
        "--yes",
        "--package",
        `backchannel-mcp@${pkg.version}`,
        "backchannel",
        "hook",
        "stop",
      ]);
    } finally {
      await cleanup();
    }
  });
});

/** Runs `node <script> ...args` and collects what it printed. */
function launch(
  script: string,
  args: string[],
  env: Record<string, string>,
  input = "",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(input);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
