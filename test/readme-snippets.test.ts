/**
 * Every snippet the README shows a newcomer runs, as they would run it, and this test
 * fails when one no longer works: the README's fenced `sh` and `json` blocks, read with
 * markdown-it. `/path/to/backchannel` is this clone.
 *
 * A line that cannot run as written here carries a mark the README's reader sees too, a
 * trailing comment that starts with one of {@link MARKS}; the test knows such lines by
 * the mark alone. `# once published` lines name the npm package, not published yet: they
 * run with the packed tarball installed into an empty folder standing in for the
 * registry (`npx --no`, which never fetches). A line neither marked nor one this test
 * can run fails it: teach the test, or mark the line.
 *
 * The `claude` lines run the real Claude Code CLI (`npm run claude-code:install`) with a
 * home of their own; without it they are skipped, loudly.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test, type TestContext } from "node:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import MarkdownIt from "markdown-it";
import { shellWords } from "../core/commands.js";
import { claudeBinary, claudeCodeSkipReason } from "./support/claude-code/install.js";
import { openBrowserLink } from "./support/helpers.js";

/** The clone (this file runs from dist/test/), without a trailing slash, as README's `/path/to/backchannel`. */
const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const README = await readFile(join(ROOT, "README.md"), "utf8");

/** The marks of lines that cannot run as written here, as the README writes them, and why. */
const MARKS = {
  "in Claude Code": "typed at Claude Code's prompt, not in a shell",
  "once published": "names the npm package, which is not published yet: run from the packed tarball instead",
  "every test": "the whole suite, this test among them",
} as const;

type Mark = keyof typeof MARKS;

/** One line of a shell snippet: the command (this clone's path put in), and its mark if it has one. */
type SnippetLine = { text: string; command: string; mark?: Mark };

/** The README's fenced blocks of `lang`, in order. */
function fences(lang: string): string[] {
  return new MarkdownIt()
    .parse(README, {})
    .filter((token) => token.type === "fence" && token.info.trim().split(/\s/)[0] === lang)
    .map((token) => token.content);
}

/** The lines of the README's shell snippets. */
function shellLines(): SnippetLine[] {
  return fences("sh").flatMap((block) =>
    block
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((text) => {
        const [command, comment] = text.split(/\s+#\s+/, 2) as [string, string | undefined];
        const mark = (Object.keys(MARKS) as Mark[]).find((name) => comment?.startsWith(name));
        return { text, command: command.trim().replaceAll("/path/to/backchannel", ROOT), mark };
      }),
  );
}

let work: string;
/** The folder the packed tarball was installed into, made once by {@link tarballInstall}. */
let installed: Promise<string> | undefined;
before(async () => {
  work = await mkdtemp(join(tmpdir(), "backchannel-readme-"));
});
after(() => rm(work, { recursive: true, force: true }));

let count = 0;
/** A fresh folder under the test's own. */
async function freshDir(name: string): Promise<string> {
  const dir = join(work, `${name}-${++count}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** `npm pack` of this clone, installed into an empty folder as a user installs it: packed once for every line that needs it. */
function tarballInstall(): Promise<string> {
  installed ??= (async () => {
    const packs = await freshDir("packs");
    const app = await freshDir("installed");
    run("npm", ["pack", "--ignore-scripts", "--loglevel=warn", "--pack-destination", packs], ROOT);
    const [tarball] = await readdir(packs);
    run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=warn", join(packs, tarball!)], app);
    return app;
  })();
  return installed;
}

/** Runs `program args` in `cwd` to its end; its output. @throws with the output when it exits other than 0. */
function run(program: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = spawnSync(program, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", timeout: 240_000, maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  assert.equal(result.status, 0, `${program} ${args.join(" ")} (in ${cwd}) exited ${result.status}: ${result.error ?? ""}\n${output}`);
  return output;
}

/** A home of its own for Claude Code and the settings `install hook` writes. */
async function claudeHome(): Promise<Record<string, string>> {
  const home = await freshDir("home");
  return { HOME: home, CLAUDE_CONFIG_DIR: join(home, ".claude"), DISABLE_AUTOUPDATER: "1" };
}

/** Starts the server as a host's JSON configuration says (`command`, `args`) and checks it lists the model's tools. */
async function assertServerStarts(command: string, args: string[], cwd: string): Promise<void> {
  const home = await freshDir("data");
  const env = { ...(process.env as Record<string, string>), BACKCHANNEL_HOME: home };
  const client = new Client({ name: "readme-snippets", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command, args, cwd, env, stderr: "pipe" }));
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(tools.includes("open_reader"), `${command} ${args.join(" ")} lists ${tools.join(", ")}`);
  } finally {
    await client.close();
  }
}

/**
 * `npm start` with `args` (after its `--`): the playground says where it listens (on a
 * free port: `PORT=0`, or the caller's `--port 0`) and serves its page there.
 * @returns what it printed by then: its link and where it keeps its data.
 */
async function assertNpmStartServes(args: string[] = []): Promise<string> {
  const child = spawn("npm", ["start", ...args], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: "0", BACKCHANNEL_HOME: await freshDir("data") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        // The link, then the line that says where its data is.
        const match = output.match(/backchannel playground: (http:\/\/\S+)/);
        if (match && /stop with Ctrl\+C/.test(output)) resolve(match[1]!);
      };
      child.stdout.on("data", read);
      child.stderr.on("data", read);
      child.once("exit", (code) => reject(new Error(`npm start exited (${code}) before it listened:\n${output}`)));
    });
    // The printed link carries the key: the first load exchanges it for a session, whose page then loads.
    const { page } = await openBrowserLink(url);
    assert.equal(page.status, 200, url);
    return output;
  } finally {
    // npm runs the playground in a shell of its own: end the whole group.
    if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM");
    await exited;
  }
}

/** Runs one unmarked shell line, or a `# once published` one from the tarball; fails on a line it cannot run. */
async function runLine(t: TestContext, line: SnippetLine): Promise<void> {
  let words = shellWords(line.command);
  let cwd = await freshDir("cwd");
  if (line.mark === "once published") {
    // The tarball stands in for the registry; --no: never fetch a package of that name.
    cwd = await tarballInstall();
    const at = words.findIndex((word, i) => word === "npx" && words[i + 1] === "-y" && words[i + 2] === "backchannel-mcp");
    assert.ok(at >= 0, `a line marked "once published" runs the published package (npx -y backchannel-mcp): ${line.text}`);
    words = [...words.slice(0, at), "npx", "--no", "--", ...words.slice(at + 2)];
  }
  const [program, ...args] = words as [string, ...string[]];
  if (line.command === "npm ci && npm start") {
    // The suite runs from this clone's node_modules: npm ci is checked as far as it can be
    // without reinstalling them under it, by what makes it fail (a lock out of step with package.json).
    run("npm", ["ci", "--dry-run", "--ignore-scripts", "--no-audit", "--no-fund"], ROOT);
    await assertNpmStartServes();
  } else if (program === "npm" && args[0] === "start" && args[1] === "--") {
    // `~` is a fresh home's; the port a free one (a fixed one may be taken on a shared machine).
    const home = await freshDir("home");
    const options = args.slice(2).map((word, i, all) => (all[i - 1] === "--port" ? "0" : word.replace(/^~(?=\/|$)/, home)));
    assert.ok(args.slice(2).includes("--port"), `${line.text}: shows --port`);
    const output = await assertNpmStartServes(["--", ...options]);
    const dataDir = options[options.indexOf("--home") + 1]!;
    assert.ok(output.includes(`data in ${dataDir}`), `${line.text}: the playground keeps its channels in ${dataDir}:\n${output}`);
  } else if (program === "claude") {
    const skip = claudeCodeSkipReason();
    if (skip !== undefined) {
      t.skip(`SKIPPING README line ${JSON.stringify(line.text)}: ${skip}`);
      return;
    }
    const env = await claudeHome();
    if (args[0] === "mcp" && args[1] === "add") {
      run(claudeBinary(), args, cwd, env);
      const got = run(claudeBinary(), ["mcp", "get", args[2]!], cwd, env);
      assert.match(got, /Status: ✔ Connected/, `${line.text}:\n${got}`);
    } else if (args[0] === "--plugin-dir" && args.length === 2) {
      // The line starts a session; its plugin loaded is what `mcp list` shows, its server started.
      const listed = run(claudeBinary(), [...args, "mcp", "list"], cwd, env);
      assert.match(listed, /plugin:backchannel:backchannel: .* ✔ Connected/, `${line.text}:\n${listed}`);
    } else assert.fail(`README line ${JSON.stringify(line.text)}: a claude command this test cannot run; teach it, or mark the line`);
  } else if (program === "node" && args[0] === join(ROOT, "dist/cli/main.js") && args[1] === "install" && args[2] === "hook") {
    const env = await claudeHome();
    run(program, args, cwd, env);
    const settings = JSON.parse(await readFile(join(env.CLAUDE_CONFIG_DIR!, "settings.json"), "utf8")) as { hooks?: { Stop?: unknown } };
    assert.match(JSON.stringify(settings.hooks?.Stop), /hook stop/, "the wake hook is in the settings");
  } else {
    assert.fail(`README line ${JSON.stringify(line.text)}: a snippet this test cannot run; teach it, or mark it (${Object.keys(MARKS).join(", ")})`);
  }
}

test("the README's shell snippets run here, but for the lines marked as not runnable here", { timeout: 600_000 }, async (t) => {
  const lines = shellLines();
  assert.ok(lines.length >= 5, `the README shows its install lines (${lines.length} found)`);
  for (const line of lines) {
    if (line.mark !== undefined && line.mark !== "once published") {
      t.diagnostic(`not run: ${JSON.stringify(line.text)} (${MARKS[line.mark]})`);
      continue;
    }
    await t.test(line.text, (sub) => runLine(sub, line));
  }
});

test("the README's host configurations (JSON) start the server", async () => {
  const blocks = fences("json");
  assert.ok(blocks.length >= 2, "Claude Desktop's and VS Code's");
  for (const block of blocks) {
    const config = JSON.parse(block.replaceAll("/path/to/backchannel", ROOT)) as {
      mcpServers?: Record<string, { command: string; args: string[] }>;
      servers?: Record<string, { command: string; args: string[] }>;
    };
    const servers = Object.values({ ...config.mcpServers, ...config.servers });
    assert.ok(servers.length > 0, block);
    for (const server of servers) await assertServerStarts(server.command, server.args, await freshDir("host"));
  }
});
