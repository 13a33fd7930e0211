/**
 * The playbook as an agent reads it: the instructions, `read_recipe`, the recipe
 * resources, and every tool call, command and host configuration written in them,
 * each run for real against real processes, so that a recipe cannot rot.
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { backchannelCommand, shellWords } from "../core/commands.js";
import { fillPlaceholders, RECIPES_DIR } from "../server/recipes.js";
import { connectServer, structured, tempDataDir } from "./support/helpers.js";
import { blockKind, codeBlocks, commands, fill, htmlBlocks, toolCalls } from "./support/recipe-text.js";
import { readRecipe } from "./support/scripted-agent.js";
import { runShellCommand } from "./support/shell-command.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

/** A safety net only, for tests that run commands: a watcher that never answers must fail the test, not hang it. */
const SAFETY_NET = { timeout: 60_000 };

interface Summary {
  name: string;
  title: string;
  summary: string;
  uri: string;
}

let dataDir: string;
let cleanup: () => Promise<void>;
let client: Client;
let toolNames: string[];
let names: string[];
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
  client = await connectServer(dataDir);
  toolNames = (await client.listTools()).tools.map((tool) => tool.name);
  names = (await readdir(RECIPES_DIR))
    .filter((file) => file.endsWith(".md"))
    .map((file) => file.slice(0, -3))
    .sort();
});
after(async () => {
  await client.close();
  await cleanup();
});

describe("the instructions", () => {
  test("fit in 2 KB and name the loop with this installation's exact watcher command", () => {
    const instructions = client.getInstructions() ?? "";
    assert.ok(Buffer.byteLength(instructions) < 2048, `${Buffer.byteLength(instructions)} bytes`);
    assert.ok(
      instructions.includes(`\`${backchannelCommand()} watch <channel_id> --home ${dataDir}\``),
      "the exact command, with the data directory",
    );
    for (const step of [
      "open_reader",
      "background",
      "poll_agent_messages",
      "ready",
      "hello",
      "ask",
      "answer",
      "thread_id",
      "short",
      "again",
      "read_recipe",
    ]) {
      assert.ok(instructions.includes(step), `mentions ${step}`);
    }
  });
});

describe("read_recipe and the recipe resources", () => {
  test("the six recipes exist", () => {
    assert.deepEqual(names, ["background-watcher", "bidirectional-events", "custom-apps", "hosts", "loop-polling", "margin-comments"]);
  });

  test("the recipe files name the command only through placeholders", async () => {
    for (const name of names) {
      const raw = await readFile(join(RECIPES_DIR, `${name}.md`), "utf8");
      // A hard-coded command would not run where this installation is not on the PATH.
      assert.doesNotMatch(raw, /npx backchannel|(?<!\}\})\bbackchannel (watch|serve)|cli\.js/, `${name} hard-codes a command`);
      for (const placeholder of raw.match(/\{\{[^}]*\}\}/g) ?? []) {
        assert.ok(
          ["{{backchannel}}", "{{backchannel.json}}", "{{backchannel.command}}", "{{backchannel.args}}"].includes(placeholder),
          `${name}: ${placeholder}`,
        );
      }
    }
  });

  test("without a name: every recipe, with a title, a summary and its resource URI", async () => {
    const result = await client.callTool({ name: "read_recipe", arguments: {} });
    const { recipes } = structured<{ recipes: Summary[] }>(result);
    assert.deepEqual(
      recipes.map((recipe) => recipe.name),
      names,
    );
    for (const recipe of recipes) {
      assert.ok(recipe.title.length > 0 && recipe.summary.length > 40, `${recipe.name} has a title and a summary`);
      assert.equal(recipe.uri, `backchannel://recipes/${recipe.name}`);
    }
    const text = (result.content as { text: string }[])[0]!.text;
    for (const name of names) assert.match(text, new RegExp(`^- ${name}: `, "m"));
  });

  test("with a name: the text, the command placeholders filled in", async () => {
    for (const name of names) {
      const result = await client.callTool({ name: "read_recipe", arguments: { name } });
      const { recipe } = structured<{ recipe: Summary & { text: string } }>(result);
      assert.equal(recipe.name, name);
      assert.ok(recipe.text.startsWith(`# ${recipe.title}\n`));
      assert.doesNotMatch(recipe.text, /\{\{/, `${name} has no placeholder left`);
      assert.equal((result.content as { text: string }[])[0]!.text, recipe.text, "hosts that show only text get the recipe");
    }
  });

  for (const bad of ["nope", "../hosts", "hosts.md", "HOSTS", ""]) {
    test(`an unknown name ${JSON.stringify(bad)} is an error that lists the names`, async () => {
      const result = await client.callTool({ name: "read_recipe", arguments: { name: bad } });
      assert.equal(result.isError, true);
      assert.match((result.content as { text: string }[])[0]!.text, new RegExp(`no recipe named .*${names.join(", ")}`));
    });
  }

  test("every recipe is a resource whose text is read_recipe's", async () => {
    const { resources } = await client.listResources();
    for (const name of names) {
      const listed = resources.find((resource) => resource.uri === `backchannel://recipes/${name}`);
      assert.ok(listed, `${name} is listed`);
      assert.equal(listed.mimeType, "text/markdown");
      const { contents } = await client.readResource({ uri: listed.uri });
      assert.equal((contents[0] as { text: string }).text, await readRecipe(client, name));
    }
    await assert.rejects(client.readResource({ uri: "backchannel://recipes/nope" }), /no recipe named "nope"/);
  });
});

test("an installed copy (package.json `files` only) serves its own recipes, naming its own command", SAFETY_NET, async () => {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const install = await mkdtemp(join(tmpdir(), "backchannel-install-"));
  try {
    const { files } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { files: string[] };
    for (const path of [...files, "package.json"]) await cp(join(root, path), join(install, path), { recursive: true });
    await symlink(join(root, "node_modules"), join(install, "node_modules"));
    // Started through dist/server/cli.js, the path users' host configs name; it names dist/cli/main.js.
    const shim = join(install, "dist", "server", "cli.js");
    const cli = join(install, "dist", "cli", "main.js");
    const env = { ...(process.env as Record<string, string>), BACKCHANNEL_HOME: dataDir };
    const installed = new Client({ name: "installed", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
    await installed.connect(new StdioClientTransport({ command: process.execPath, args: [shim], env, stderr: "pipe" }));
    try {
      const watcher = await readRecipe(installed, "background-watcher");
      assert.ok(watcher.includes(`node ${cli} watch <channel_id>`), "the recipe names the installed copy's command");
      assert.ok(installed.getInstructions()?.includes(`node ${cli} watch <channel_id>`));
      await runBackchannel("installed background-watcher", `node ${cli} watch installed-copy`);
    } finally {
      await installed.close();
    }
  } finally {
    await rm(install, { recursive: true, force: true });
  }
});

describe("the command placeholders", () => {
  const installs: [string, string[]][] = [
    ["node /opt/backchannel/dist/server/cli.js", ["node", "/opt/backchannel/dist/server/cli.js"]],
    ['node "/Users/Jane Doe/backchannel/dist/server/cli.js"', ["node", "/Users/Jane Doe/backchannel/dist/server/cli.js"]],
    ["node C:\\Users\\jane\\backchannel\\dist\\server\\cli.js", ["node", "C:\\Users\\jane\\backchannel\\dist\\server\\cli.js"]],
    ["npx backchannel", ["npx", "backchannel"]],
  ];
  for (const [command, argv] of installs) {
    test(`fill every host configuration correctly for ${command}`, async () => {
      assert.deepEqual(shellWords(command), argv);
      for (const name of names) {
        const text = fillPlaceholders(await readFile(join(RECIPES_DIR, `${name}.md`), "utf8"), command);
        for (const block of codeBlocks(text).filter((block) => block.info === "json")) {
          const config = JSON.parse(block.body) as { command: string }[] | { mcpServers?: object; servers?: object };
          if (Array.isArray(config)) {
            for (const monitor of config) assert.ok(monitor.command.startsWith(`${command} watch `), monitor.command);
          } else {
            for (const server of Object.values(config.mcpServers ?? config.servers ?? {}) as { command: string; args: string[] }[]) {
              assert.deepEqual([server.command, ...server.args], argv);
            }
          }
        }
      }
    });
  }

  test("BACKCHANNEL_COMMAND names the command everywhere: instructions, open_reader, recipes", async () => {
    const npx = await connectServer(dataDir, { BACKCHANNEL_COMMAND: "npx backchannel" });
    try {
      assert.ok(npx.getInstructions()?.includes(`\`npx backchannel watch <channel_id> --home ${dataDir}\``));
      const opened = structured<{ channel_id: string; watch_command: string }>(
        await npx.callTool({ name: "open_reader", arguments: { markdown: "# A\n\nb" } }),
      );
      assert.equal(opened.watch_command, `npx backchannel watch ${opened.channel_id} --home ${dataDir}`);
      const hosts = await readRecipe(npx, "hosts");
      assert.match(hosts, /"command": "npx", "args": \["backchannel"\]/);
      assert.match(hosts, /^claude mcp add backchannel -- npx backchannel$/m);
    } finally {
      await npx.close();
    }
  });
});

describe("everything written in a recipe runs", () => {
  for (const name of ["instructions", "background-watcher", "bidirectional-events", "custom-apps", "hosts", "loop-polling", "margin-comments"]) {
    test(name, SAFETY_NET, async (t) => {
      const text = name === "instructions" ? (client.getInstructions() ?? "") : await readRecipe(client, name);
      const channelId = `recipe-${name}`;
      // An app's HTML is written once, in a block named after the placeholder its open_app call names (```html poll_html).
      const values = { channel_id: channelId, thread_id: "t1", ...htmlBlocks(text) };

      // Fenced blocks: only kinds this test knows how to check, and every line of a tool block is a call.
      for (const block of codeBlocks(text)) {
        assert.ok(["sh", "tool", "json", "text", "html"].includes(blockKind(block)), `${name}: a \`\`\`${block.info} block, which no test checks`);
        if (block.info === "tool") {
          const lines = block.body.split("\n").filter((line) => line.trim() !== "");
          assert.equal(toolCalls(block.body).length, lines.length, `${name}: every line of a tool block is a call: ${block.body}`);
        }
      }

      const calls = toolCalls(text);
      for (const call of calls) await runToolCall(name, fill(call.args, values), call.name, call.source);

      const lines = commands(text, backchannelCommand()).map((command) => fill(command, values));
      for (const line of lines) await runCommand(name, line);

      let configs = 0;
      for (const block of codeBlocks(text).filter((block) => block.info === "json")) {
        configs += await checkConfig(name, JSON.parse(fill(block.body, values)) as unknown);
      }
      t.diagnostic(`${name}: ran ${calls.length} tool calls, ${lines.length} commands, ${configs} host configurations`);
    });
  }
});

/** Calls `toolName` with `args` as written (placeholders filled); a message waits first so that a long-poll returns at once. */
async function runToolCall(recipe: string, args: Record<string, unknown>, toolName: string, source: string): Promise<void> {
  assert.ok(toolNames.includes(toolName), `${recipe} writes ${source}, but there is no tool ${toolName}`);
  const channelId = args.channel_id as string;
  if (toolName === "poll_agent_messages") await call("notify_agent", { channel_id: channelId, event: "ask", data: {} });
  if (toolName === "poll_ui_messages") await call("notify_ui", { channel_id: channelId, event: "answer", data: {} });
  if (toolName === "save_app") await call("open_app", { channel_id: channelId, html: "<p>An app to save.</p>" });
  const result = await call(toolName, args);
  assert.notEqual(result.isError, true, `${recipe}: ${source} failed: ${JSON.stringify(result.content)}`);
  if (toolName.startsWith("poll_"))
    assert.ok(structured<{ messages: unknown[] }>(result).messages.length > 0, `${recipe}: ${source} read the waiting message`);
}

async function call(name: string, args: Record<string, unknown>) {
  return client.callTool({ name, arguments: args }, { timeout: 20_000 });
}

/**
 * Runs one command line written in a recipe. backchannel's own commands run as written
 * (a watcher gets a waiting message first, so it answers at once); a host's command
 * that adds backchannel must name a command that starts a working server.
 */
async function runCommand(recipe: string, line: string): Promise<void> {
  if (line.startsWith(`${backchannelCommand()} `)) return runBackchannel(recipe, line);
  const words = shellWords(line);
  if (words[0] === "claude" && words[1] === "mcp" && words[2] === "add" && words.includes("--")) {
    return checkServer(recipe, words.slice(words.indexOf("--") + 1));
  }
  if (words[0] === "goose" && words[1] === "session" && words[2] === "--with-extension" && words.length === 4) {
    return checkServer(recipe, shellWords(words[3]!));
  }
  assert.fail(`${recipe} writes the command ${JSON.stringify(line)}, which no test knows how to check`);
}

async function runBackchannel(recipe: string, line: string): Promise<void> {
  const words = shellWords(line);
  if (words.includes("statusline")) return runStatuslineSetup(recipe, line);
  const channelId = words[words.indexOf("watch") + 1];
  assert.ok(words.includes("watch") && channelId, `${recipe}: ${line} is a watcher command`);
  await call("notify_agent", { channel_id: channelId, event: "ask", data: { question: "ready?" } });
  const follow = words.includes("--follow");
  const command = runShellCommand(line, { BACKCHANNEL_HOME: dataDir });
  try {
    const first = await command.nextLine();
    assert.ok(first?.includes(channelId), `${recipe}: ${line} printed ${JSON.stringify(first)}; stderr: ${command.stderr()}`);
    // Exit mode ends by itself with 0; follow mode keeps going until stopped.
    if (!follow) assert.equal(await command.exited, 0, `${recipe}: ${line} exits 0 when a message waits`);
  } finally {
    command.stop();
  }
  if (follow) assert.equal(await command.exited, null, `${recipe}: ${line} kept following until stopped`);
}

/**
 * Runs `install statusline` or `uninstall statusline` as written, against a throwaway
 * Claude Code configuration folder (never the user's), and checks what it did to it.
 */
async function runStatuslineSetup(recipe: string, line: string): Promise<void> {
  const config = await mkdtemp(join(tmpdir(), "backchannel-claude-"));
  const run = async (commandLine: string) => {
    const command = runShellCommand(commandLine, { BACKCHANNEL_HOME: dataDir, CLAUDE_CONFIG_DIR: config });
    assert.equal(await command.exited, 0, `${recipe}: ${commandLine} failed: ${command.stderr()}`);
  };
  const statusLine = async () =>
    (JSON.parse(await readFile(join(config, "settings.json"), "utf8").catch(() => "{}")) as { statusLine?: { command: string } }).statusLine;
  try {
    const uninstall = shellWords(line).includes("uninstall");
    // An uninstall is checked on a status line installed first.
    if (uninstall) await run(line.replace(/\buninstall statusline\b/, "install statusline"));
    await run(line);
    if (uninstall) assert.equal(await statusLine(), undefined, `${recipe}: ${line} took backchannel's status line out`);
    else assert.match((await statusLine())?.command ?? "", / statusline /, `${recipe}: ${line} installed backchannel's status line`);
  } finally {
    await rm(config, { recursive: true, force: true });
  }
}

/** Checks Claude Code hook settings: each PostToolUse matcher takes backchannel's tools, and each command answers a real hook input. */
async function checkHooks(recipe: string, hooks: Record<string, { matcher: string; hooks: { type: string; command: string }[] }[]>): Promise<number> {
  assert.deepEqual(Object.keys(hooks), ["PostToolUse"], `${recipe}: the hook events written`);
  let checked = 0;
  for (const entry of hooks.PostToolUse!) {
    assert.match("mcp__backchannel__notify_ui", new RegExp(`^(?:${entry.matcher})$`), `${recipe}: the matcher takes backchannel's tools`);
    for (const hook of entry.hooks) {
      assert.equal(hook.type, "command");
      const input = {
        session_id: "s",
        cwd: dataDir,
        hook_event_name: "PostToolUse",
        tool_name: "mcp__backchannel__notify_ui",
        tool_input: { channel_id: "c", event: "answer" },
        tool_response: { content: [{ type: "text", text: "Sent answer as seq 1 (1 waiting)." }], structuredContent: { seq: 1, pending: 1 } },
        tool_use_id: "toolu_1",
      };
      const command = runShellCommand(hook.command, { BACKCHANNEL_HOME: dataDir }, JSON.stringify(input));
      assert.equal(await command.exited, 0, `${recipe}: ${hook.command}: ${command.stderr()}`);
      const output = JSON.parse(command.stdout()) as { hookSpecificOutput: { updatedToolOutput: string } };
      assert.equal(output.hookSpecificOutput.updatedToolOutput, "Sent answer as seq 1 (1 waiting).");
      checked += 1;
    }
  }
  return checked;
}

/** Checks a host configuration written as JSON; returns how many servers, monitors or hooks it checked. */
async function checkConfig(recipe: string, config: unknown): Promise<number> {
  const hooks = (config as { hooks?: Parameters<typeof checkHooks>[1] }).hooks;
  if (hooks) return checkHooks(recipe, hooks);
  if (Array.isArray(config)) {
    // A Claude Code plugin's monitors.json.
    for (const monitor of config as { name: string; command: string; description: string; when: string }[]) {
      assert.deepEqual(Object.keys(monitor).sort(), ["command", "description", "name", "when"], `${recipe}: a plugin monitor's fields`);
      assert.match(monitor.when, /^(always|on-skill-invoke:.+)$/);
      await runBackchannel(recipe, monitor.command);
    }
    return config.length;
  }
  const servers = (config as { mcpServers?: object; servers?: object }).mcpServers ?? (config as { servers?: object }).servers;
  assert.ok(servers, `${recipe}: a JSON block that is neither a host's MCP configuration nor a plugin's monitors`);
  for (const entry of Object.values(servers) as { command: string; args: string[] }[]) await checkServer(recipe, [entry.command, ...entry.args]);
  return Object.keys(servers).length;
}

/** Starts `argv` as a host would start an MCP server, and checks that it serves backchannel's tools. */
async function checkServer(recipe: string, argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  const server = new Client({ name: "recipe-host", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
  await server.connect(
    new StdioClientTransport({
      command: command!,
      args,
      env: { ...(process.env as Record<string, string>), BACKCHANNEL_HOME: dataDir },
      stderr: "pipe",
    }),
  );
  try {
    const { tools } = await server.listTools();
    assert.ok(
      tools.some((tool) => tool.name === "read_recipe"),
      `${recipe}: ${argv.join(" ")} serves backchannel`,
    );
    if (argv.includes("--claude-channel")) {
      assert.deepEqual(server.getServerCapabilities()?.experimental?.["claude/channel"], {}, `${recipe}: ${argv.join(" ")} declares claude/channel`);
    }
  } finally {
    await server.close();
  }
}
