/**
 * The `backchannel` command: help, version, errors, and a stdio server whose stdout
 * carries protocol only.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { CLI, tempDataDir } from "./support/helpers.js";

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 10_000 });
}

test("--version prints the package version", () => {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  const result = run(["--version"]);
  assert.equal(result.status, 0);
  assert.equal(result.stdout, `${version}\n`);
});

for (const args of [["--help"], ["serve", "--help"], ["watch", "--help"]]) {
  test(`${args.join(" ")} prints usage and exits 0`, () => {
    const result = run(args);
    assert.equal(result.status, 0);
    assert.match(result.stdout, /Usage/);
  });
}

test("serve --help names the command on the PATH and the published package, never npx backchannel as a command", () => {
  const { stdout } = run(["serve", "--help"]);
  assert.match(stdout, /the command "backchannel" when it is on your PATH, else as\n"npx -y backchannel-mcp" \(the published package/);
  assert.doesNotMatch(stdout, /as the command "npx backchannel"/);
});

test("an unknown command or option exits 1 with a message on stderr", () => {
  const unknown = run(["frobnicate"]);
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  const badOption = run(["watch", "x", "--bogus"]);
  assert.equal(badOption.status, 1);
  assert.match(badOption.stderr, /bogus.*see --help/);
  const noId = run(["watch"]);
  assert.equal(noId.status, 1);
  assert.match(noId.stderr, /give exactly one channel id/);
});

test("a malformed limit variable stops the server with a message naming it", async () => {
  const { dir, cleanup } = await tempDataDir();
  try {
    const result = run(["serve"], { BACKCHANNEL_HOME: dir, BACKCHANNEL_MAX_QUEUE_MESSAGES: "lots" });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /BACKCHANNEL_MAX_QUEUE_MESSAGES="lots" is not a positive whole number/);
  } finally {
    await cleanup();
  }
});

test("serve prints its banner on stderr and nothing on stdout until a client speaks", async () => {
  const { dir, cleanup } = await tempDataDir();
  const child = spawn(process.execPath, [CLI, "serve"], { env: { ...process.env, BACKCHANNEL_HOME: dir }, stdio: ["pipe", "pipe", "pipe"] });
  try {
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise<void>((resolve) =>
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("\n")) resolve();
      }),
    );
    assert.match(stderr, /^backchannel \S+: MCP server on stdio, data in /);
    child.stdin.end();
    await new Promise((resolve) => child.on("exit", resolve));
    assert.equal(stdout, "");
  } finally {
    child.kill();
    await cleanup();
  }
});
