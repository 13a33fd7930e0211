/**
 * What the model sees of backchannel in the real Claude Code (the pinned version, see
 * test/support/claude-code/), configured as the README says (`claude mcp add`): the first
 * model request of `claude -p`, taken by the scripted model. App-only tools never reach
 * the model; the server's instructions do, word for word; tools are deferred (names
 * only) except those marked `anthropic/alwaysLoad`; and the context backchannel adds is
 * the difference from the same request without backchannel, set beside the figure the
 * bench reports (bench/suites/context.ts: model-visible schemas + instructions).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connectServer, tempDataDir } from "./support/helpers.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { type RecordedRequest, startModelServer, type Turn } from "./support/claude-code/model-server.js";
import { runPrint, AS_CLAUDE_CODE } from "./support/claude-code/session.js";

const skip = claudeCodeSkipReason();

interface ServerTool {
  name: string;
  description?: string;
  inputSchema: unknown;
  _meta?: Record<string, unknown> & { ui?: { visibility?: unknown } };
}

/** Claude Code's name for an MCP tool of the server `backchannel`. */
const hostName = (tool: string) => `mcp__backchannel__${tool}`;

describe("backchannel as the model sees it in Claude Code", { skip }, () => {
  let tools: ServerTool[];
  let instructions: string;
  /** The first model request with backchannel configured, and without. */
  let withServer: Turn;
  let withoutServer: RecordedRequest;
  let cleanup: () => Promise<void>;

  before(async () => {
    const data = await tempDataDir();
    cleanup = data.cleanup;
    // Every tool, as a host that shows apps lists them; the instructions as Claude Code, which shows none, gets them.
    const host = await connectServer(data.dir);
    tools = (await host.listTools()).tools as ServerTool[];
    await host.close();
    const asClaudeCode = await connectServer(data.dir, {}, AS_CLAUDE_CODE);
    instructions = asClaudeCode.getInstructions() ?? "";
    await asClaudeCode.close();
    // The model ends the turn at once: only what Claude Code sends first is looked at.
    const model = await startModelServer(() => ({ text: "ok" }));
    try {
      const run = await runPrint("hello", { model, dataDir: data.dir });
      assert.equal(run.code, 0, run.stderr);
      withServer = await model.waitForTurn(undefined, { timeoutMs: 1 });
      const bare = await startModelServer(() => ({ text: "ok" }));
      try {
        const plain = await runPrint("hello", { model: bare, dataDir: data.dir, configure: "none" });
        assert.equal(plain.code, 0, plain.stderr);
        withoutServer = bare.requests.find((request) => request.main)!;
      } finally {
        await bare.close();
      }
    } finally {
      await model.close();
    }
  });
  after(() => cleanup?.());

  test("app-only tools are not shown to the model, by name or schema", () => {
    const appOnly = tools.filter(isAppOnly).map((tool) => tool.name);
    assert.ok(appOnly.length > 0, "the server has app-only tools");
    const sent = JSON.stringify(withServer.request);
    for (const name of appOnly) assert.ok(!sent.includes(hostName(name)), `${name} reached the model`);
  });

  test("every model-visible tool is there, loaded or deferred by name", () => {
    for (const tool of tools.filter((tool) => !isAppOnly(tool))) {
      const name = hostName(tool.name);
      assert.ok(withServer.loaded(name) || deferredNames(withServer).includes(name), `${name} is neither loaded nor deferred`);
    }
  });

  test("only the tools marked anthropic/alwaysLoad are loaded; the others are deferred to ToolSearch", () => {
    const visible = tools.filter((tool) => !isAppOnly(tool));
    const always = visible.filter((tool) => tool._meta?.["anthropic/alwaysLoad"] === true).map((tool) => hostName(tool.name));
    // notify_ui too: a woken agent answers in one call, with no ToolSearch first.
    assert.deepEqual(always.sort(), [hostName("notify_ui"), hostName("poll_agent_messages")]);
    const loaded = withServer.toolNames.filter((name) => name.startsWith("mcp__backchannel__"));
    assert.deepEqual(loaded.sort(), always);
    const deferred = deferredNames(withServer).filter((name) => name.startsWith("mcp__backchannel__"));
    assert.deepEqual(
      deferred.sort(),
      visible
        .map((tool) => hostName(tool.name))
        .filter((name) => !always.includes(name))
        .sort(),
    );
    // The loaded schema is the server's, as the model gets it.
    const sent = withServer.request.tools!.find((tool) => tool.name === always[0])!;
    const own = visible.find((tool) => hostName(tool.name) === always[0])!;
    assert.equal(sent.description, own.description);
    assert.deepEqual(sent.input_schema, own.inputSchema);
  });

  test("the server's instructions reach the model word for word, under MCP Server Instructions", () => {
    assert.ok(instructions.length > 0);
    const section = withServer.transcript.split("# MCP Server Instructions")[1] ?? "";
    assert.ok(section.includes(`## backchannel\n${instructions}`), "the instructions are not in the MCP Server Instructions section");
  });

  test("the context backchannel adds, as Claude Code sends it, is within the bench's model-visible figure", (t) => {
    const visible = tools.filter((tool) => !isAppOnly(tool));
    // The bench's figure (bench/suites/context.ts, context.leanChars): every visible schema + instructions.
    const benchChars =
      JSON.stringify(visible.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).length + instructions.length;
    const added = JSON.stringify(withServer.request).length - JSON.stringify(withoutServer.body).length;
    const loadedChars = JSON.stringify(withServer.request.tools!.filter((tool) => tool.name.startsWith("mcp__backchannel__"))).length;
    const deferredChars = deferredNames(withServer)
      .filter((name) => name.startsWith("mcp__backchannel__"))
      .join("\n").length;
    t.diagnostic(
      `Claude Code adds ${added} chars (~${Math.round(added / 4)} tokens): instructions ${instructions.length}, loaded schema ${loadedChars}, deferred names ${deferredChars}; the bench's figure ${benchChars}`,
    );
    // What it adds is at least the instructions and the loaded schema, and less than every schema would cost.
    assert.ok(added >= instructions.length + loadedChars, `${added} < ${instructions.length + loadedChars}`);
    assert.ok(added < benchChars, `${added} ≥ the bench's ${benchChars}`);
  });
});

/** The tool names Claude Code lists as deferred ("available via ToolSearch"), one a line. */
function deferredNames(turn: Turn): string[] {
  const text = turn.transcript;
  const start = text.indexOf("The following deferred tools are now available via ToolSearch");
  if (start < 0) return [];
  const lines = text.slice(start).split("\n").slice(1);
  const names: string[] = [];
  for (const line of lines) {
    if (!/^[A-Za-z0-9_]+$/.test(line.trim())) break;
    names.push(line.trim());
  }
  return names;
}

function isAppOnly(tool: ServerTool): boolean {
  const visibility = tool._meta?.ui?.visibility;
  return Array.isArray(visibility) && visibility.length === 1 && visibility[0] === "app";
}
