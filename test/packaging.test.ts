/**
 * Installing backchannel as a user does, from what would be published, never from the
 * source tree: the npm tarball installed into an empty folder (`npx backchannel`), and
 * the MCP Bundle for Claude Desktop unpacked and started as its manifest says. Both
 * start the real server over stdio and must answer `tools/list`.
 *
 * They run on the built tree (`npm test` builds first). Packing runs no script
 * (`--ignore-scripts`: `prepare` would build everything again). Installing the tarball
 * runs whatever npm runs for a user: nothing of backchannel's (npm runs `prepare` for
 * git and folder installs only, and the package has no install script), so the
 * tarball must hold everything built. It prefers the local npm cache (filled by
 * `npm ci`) to the registry.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile, readdir, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { Client, type ClientCapabilities } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";
import { stopBrowserHost } from "./support/browser-host.js";
import { openBrowserLink } from "./support/helpers.js";

const exec = promisify(execFile);
/** The repository (this file runs from dist/test/). */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const NPX = process.platform === "win32" ? "npx.cmd" : "npx";
/** The model-visible tools every installation must list. */
const TOOLS = ["open_reader", "notify_ui", "poll_agent_messages", "read_recipe"];

interface PackageJson {
  name: string;
  version: string;
  mcpName: string;
  bin: Record<string, string>;
  files: string[];
  private?: boolean;
}

const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as PackageJson;

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), "backchannel-packaging-"));
});
after(() => rm(work, { recursive: true, force: true }));

/** Runs `command` and resolves with its stdout. @throws with its output when it fails. */
async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await exec(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed: ${failed.message}\n${failed.stdout ?? ""}${failed.stderr ?? ""}`);
  }
}

/**
 * Starts the server with `command args` (and `env`) over stdio, as a host does: the names
 * of the tools it lists, and the channel it opened for a document (so that it wrote its
 * data directory).
 */
async function tryServer(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  capabilities: ClientCapabilities = {},
): Promise<{ tools: string[]; channelId: string; readerUrl?: string }> {
  const transport = new StdioClientTransport({ command, args, cwd, env: { ...(process.env as Record<string, string>), ...env }, stderr: "pipe" });
  const client = new Client({ name: "packaging-test", version: "0.0.0" }, { capabilities });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const opened = await client.callTool({ name: "open_reader", arguments: { markdown: "# Installed\n\nIt runs." } });
    const { channel_id, reader_url } = opened.structuredContent as { channel_id: string; reader_url?: string };
    return { tools, channelId: channel_id, readerUrl: reader_url };
  } finally {
    await client.close();
  }
}

describe("the package as published", () => {
  test("package.json, server.json and the bundle manifest agree, and name what ships", async () => {
    const server = JSON.parse(await readFile(join(ROOT, "server.json"), "utf8")) as {
      name: string;
      version: string;
      description: string;
      packages: { registryType: string; identifier: string; version: string; transport: { type: string } }[];
    };
    const manifest = JSON.parse(await readFile(join(ROOT, "mcpb", "manifest.json"), "utf8")) as { version: string; server: { entry_point: string } };
    assert.equal(pkg.private, undefined, "publishable");
    assert.equal(server.name, pkg.mcpName, "the registry checks mcpName against server.json's name");
    assert.equal(server.version, pkg.version);
    assert.ok(server.description.length <= 100, "the registry's limit");
    assert.deepEqual(
      server.packages.map((entry) => [entry.registryType, entry.identifier, entry.version, entry.transport.type]),
      [["npm", pkg.name, pkg.version, "stdio"]],
    );
    assert.equal(manifest.version, pkg.version);
    assert.equal(manifest.server.entry_point, pkg.bin.backchannel);
    const entry = await readFile(join(ROOT, pkg.bin.backchannel!), "utf8");
    assert.ok(entry.startsWith("#!/usr/bin/env node\n"), "the bin has a shebang");

    const [packed] = JSON.parse(await run(NPM, ["pack", "--dry-run", "--json", "--ignore-scripts"], ROOT)) as { files: { path: string }[] }[];
    const files = new Set(packed!.files.map((file) => file.path));
    for (const needed of [
      "package.json",
      "README.md",
      "server.json",
      "dist/cli/main.js",
      "dist/server/cli.js",
      "dist/server/index.js",
      "dist/app/reader.html",
      "dist/app/channel.js",
      "dist/app/channel.d.ts",
      "recipes/hosts.md",
      "plugin/.claude-plugin/plugin.json",
      "plugin/.mcp.json",
      "plugin/hooks/hooks.json",
      "plugin/scripts/backchannel.mjs",
      "plugin/skills/margin-comments/SKILL.md",
    ]) {
      assert.ok(files.has(needed), `${needed} ships`);
    }
    const stray = [...files].filter((path) => /^(dist\/)?(test|bench|playground)\//.test(path) || path.includes("node_modules"));
    assert.deepEqual(stray, [], "no tests, benchmarks or playground");
  });

  test("npm: the tarball installs into an empty folder; npx backchannel --help works and the server answers tools/list", {
    timeout: 300_000,
  }, async () => {
    const packs = join(work, "npm");
    const app = join(work, "npm-install");
    await mkdir(packs);
    await mkdir(app);
    await run(NPM, ["pack", "--ignore-scripts", "--loglevel=warn", "--pack-destination", packs], ROOT);
    const [tarball] = await readdir(packs);
    await run(NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=warn", join(packs, tarball!)], app);

    // --no: never fetch a package of that name from the registry, only run the installed bin.
    const help = await run(NPX, ["--no", "--", "backchannel", "--help"], app);
    assert.match(help, /^backchannel: a live channel/);
    assert.match(await run(NPX, ["--no", "--", "backchannel", "--version"], app), new RegExp(pkg.version.replaceAll(".", "\\.")));

    const dataDir = join(work, "npm-data");
    const { tools, channelId, readerUrl } = await tryServer(NPX, ["--no", "--", "backchannel"], { BACKCHANNEL_HOME: dataDir }, app);
    for (const tool of TOOLS) assert.ok(tools.includes(tool), `${tool} in ${tools.join(", ")}`);
    assert.ok((await readdir(join(dataDir, "channels"))).includes(channelId), "its channels are in BACKCHANNEL_HOME");
    // A client that shows no apps gets a link to the installed package's browser host, and its page loads.
    try {
      assert.ok(readerUrl, "open_reader gave a client that shows no apps a link");
      assert.equal((await openBrowserLink(readerUrl)).page.status, 200);
    } finally {
      stopBrowserHost({ BACKCHANNEL_HOME: dataDir });
    }
    const installed = JSON.parse(await readFile(join(app, "node_modules", pkg.name, "package.json"), "utf8")) as PackageJson;
    assert.equal(installed.version, pkg.version);
  });

  test("MCP Bundle: npm run pack:mcpb builds it; unpacked, the command its manifest names answers tools/list", { timeout: 300_000 }, async () => {
    const bundle = join(work, "backchannel.mcpb");
    const unpacked = join(work, "mcpb-unpacked");
    await run(process.execPath, [join(ROOT, "mcpb", "pack.mjs"), bundle], ROOT);
    await run(process.execPath, [join(ROOT, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js"), "unpack", bundle, unpacked], ROOT);

    const manifest = JSON.parse(await readFile(join(unpacked, "manifest.json"), "utf8")) as {
      version: string;
      server: { mcp_config: { command: string; args: string[]; env: Record<string, string> } };
      user_config: Record<string, { type: string }>;
    };
    assert.equal(manifest.version, pkg.version);
    assert.equal(manifest.user_config.data_dir?.type, "directory", "the data directory is the user's to set");
    assert.ok(!(await readdir(join(unpacked, "node_modules"))).includes("typescript"), "no dev dependency in the bundle");

    // What Claude Desktop does: fill in the manifest's variables and start the command.
    const dataDir = join(work, "mcpb-data");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the manifest's own placeholders, written literally
    const fill = (value: string) => value.replaceAll("${__dirname}", unpacked).replaceAll("${user_config.data_dir}", dataDir);
    const { command, args, env } = manifest.server.mcp_config;
    assert.equal(command, "node", "Claude Desktop runs it with its own Node");
    const filledEnv = Object.fromEntries(Object.entries(env).map(([key, value]) => [key, fill(value)]));
    // Claude Desktop shows apps.
    const { tools, channelId } = await tryServer(process.execPath, args.map(fill), filledEnv, work, { extensions: APPS_HOST_EXTENSIONS });
    for (const tool of TOOLS) assert.ok(tools.includes(tool), `${tool} in ${tools.join(", ")}`);
    assert.ok((await readdir(join(dataDir, "channels"))).includes(channelId), "its channels are in the data directory the user set");
  });
});
