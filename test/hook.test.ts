/**
 * `backchannel hook post-tool-use` as Claude Code runs it: a real process fed the
 * hook's input JSON, built around real results of a real server's tools. Confirmation
 * tools get one line; data tools get one line plus their full data for the model; any
 * other tool, an error result or unreadable input gets no output at all.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { MAX_CONTEXT_CHARS } from "../claude-code/hook.js";
import { CLI, type CommandRun, connectServer, runCommand, tempDataDir } from "./support/helpers.js";

/** A tool result as the SDK client returns it. */
interface Result {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

let cleanup: () => Promise<void>;
let client: Client;
before(async () => {
  let dataDir: string;
  ({ dir: dataDir, cleanup } = await tempDataDir());
  client = await connectServer(dataDir, { CLAUDE_PID: "7171" });
});
after(async () => {
  await client.close();
  await cleanup();
});

/** The document every reader of these tests shows. */
const MARMOTS = "# Marmots\n\nThe marmots convene at dawn to discuss tariffs.\n";

/** A new reader channel on the real server. */
async function openReader(): Promise<string> {
  return (await call("open_reader", { markdown: MARMOTS })).structuredContent!.channel_id as string;
}

/** Stores the user's question "Why dawn?" in thread t-1 of a reader channel. */
function recordArgs(channel: string): Record<string, unknown> {
  return {
    channel_id: channel,
    thread_id: "t-1",
    quote: "dawn",
    paragraph: "The marmots convene at dawn to discuss tariffs.",
    anchor: { block: 1, start: 23, end: 27 },
    message: { id: "q-1", role: "user", text: "Why dawn?" },
  };
}

/** Calls a tool of the real server. */
async function call(name: string, args: Record<string, unknown>): Promise<Result> {
  return (await client.callTool({ name, arguments: args })) as Result;
}

/** The text of a result (its one text block). */
function textOf(result: Result): string {
  assert.equal(result.content.length, 1);
  return result.content[0]!.text!;
}

/** The hook input Claude Code sends after `mcp__<server>__<tool>` returned `response`. */
function hookInput(tool: string, args: Record<string, unknown>, response: unknown, server = "backchannel"): string {
  return JSON.stringify({
    session_id: "9d1c7e2a-test",
    transcript_path: "/tmp/transcript.jsonl",
    cwd: "/tmp/project",
    hook_event_name: "PostToolUse",
    tool_name: `mcp__${server}__${tool}`,
    tool_input: args,
    tool_response: response,
    tool_use_id: "toolu_01test",
  });
}

/** Runs the hook with `input` on stdin. */
function runHook(input: string): Promise<CommandRun> {
  return runCommand(["hook", "post-tool-use"], input);
}

/** What the hook must print for a confirmation tool whose result text is `line`. */
function confirmation(line: string): string {
  return `${JSON.stringify({ hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: line } })}\n`;
}

/** What the hook must print for a data tool: `summary` for the panel, `context` for the model. */
function data(summary: string, context: string): string {
  return `${JSON.stringify({ hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: summary, additionalContext: context } })}\n`;
}

/** Runs the hook on a tool's real result, as Claude Code would, and checks it exited 0 with nothing on stderr. */
async function hookOn(tool: string, args: Record<string, unknown>, response: unknown, server?: string): Promise<string> {
  const { code, stdout, stderr } = await runHook(hookInput(tool, args, response, server));
  assert.equal(code, 0);
  assert.equal(stderr, "");
  return stdout;
}

describe("confirmation tools get their one line", () => {
  test("notify_ui, notify_agent, reader_record, post_wall", async () => {
    const channel = await openReader();
    const calls: [string, Record<string, unknown>, RegExp][] = [
      ["notify_ui", { channel_id: channel, event: "status", data: { text: "reading" } }, /^Sent status as seq \d+ \(\d+ waiting\)\.$/],
      ["notify_agent", { channel_id: channel, event: "note", data: {} }, /^Sent note as seq \d+/],
      ["reader_record", recordArgs(channel), /^Recorded in thread t-1\.$/],
      ["post_wall", { text: "Reading chapter 3", duration_s: 600 }, /^The wall shows "Reading chapter 3"/],
    ];
    for (const [tool, args, expected] of calls) {
      const result = await call(tool, args);
      assert.notEqual(result.isError, true, `${tool}: ${JSON.stringify(result.content)}`);
      const line = textOf(result);
      assert.match(line, expected);
      assert.equal(await hookOn(tool, args, result), confirmation(line), tool);
    }
  });

  test("whatever shape tool_response takes (content array, string), and for a plugin's server", async () => {
    const args = { channel_id: await openReader(), event: "hello", data: {} };
    const result = await call("notify_ui", args);
    const line = textOf(result);
    assert.equal(await hookOn("notify_ui", args, result.content), confirmation(line), "bare content array");
    assert.equal(await hookOn("notify_ui", args, line), confirmation(line), "string");
    assert.equal(await hookOn("notify_ui", args, result, "plugin_backchannel_backchannel"), confirmation(line), "plugin server name");
  });
});

describe("data tools get one line, and the model all of the data", () => {
  test("poll_agent_messages: the count line, and every message as additional context", async () => {
    const channel = "hook-poll";
    await call("notify_agent", { channel_id: channel, event: "note", data: {} });
    await call("notify_agent", { channel_id: channel, event: "ask", data: { thread_id: "t-1", text: "Why do marmots care about tariffs?" } });
    await call("notify_agent", { channel_id: channel, event: "ask", data: { thread_id: "t-2", text: "Which dawn?" } });
    const args = { channel_id: channel };
    const result = await call("poll_agent_messages", args);
    const text = textOf(result);
    const [head, ...rest] = text.split("\n");
    assert.match(head!, /^3 messages \(cursor \d+, epoch [A-Za-z0-9_-]+\):$/); // the note sent above, and the two questions
    assert.equal(rest.length, 3);
    const output = await hookOn("poll_agent_messages", args, result);
    assert.equal(output, data(head!, text));
    const parsed = JSON.parse(output) as { hookSpecificOutput: { updatedToolOutput: string; additionalContext: string } };
    assert.doesNotMatch(parsed.hookSpecificOutput.updatedToolOutput, /\n/);
    assert.match(parsed.hookSpecificOutput.additionalContext, /Why do marmots care about tariffs\?[\s\S]*Which dawn\?/);
  });

  test("poll_ui_messages and read_recipe: multi-line texts carry their data", async () => {
    const pollArgs = { channel_id: "hook-ui" };
    await call("notify_ui", { channel_id: "hook-ui", event: "status", data: { text: "reading" } });
    const polled = await call("poll_ui_messages", pollArgs);
    const pollText = textOf(polled);
    assert.match(pollText, /"event":"status"/);
    assert.equal(await hookOn("poll_ui_messages", pollArgs, polled), data(pollText.split("\n")[0]!, pollText));

    for (const args of [{}, { name: "background-watcher" }]) {
      const recipe = await call("read_recipe", args);
      const text = textOf(recipe);
      assert.ok(text.includes("\n"), "a recipe or the list has several lines");
      assert.equal(await hookOn("read_recipe", args, recipe), data(text.split("\n")[0]!, text));
    }
  });

  test("open_reader and reader_state: a one-line text gets the structured data added, the panel line is cut at 200", async () => {
    const openArgs = { markdown: "# Hedgehogs\n\nHedgehogs hibernate." };
    const opened = await call("open_reader", openArgs);
    const line = textOf(opened);
    assert.ok(!line.includes("\n") && line.length > 200, `a long one-line text: ${line}`);
    // Cut to 199 characters and "…"; a space left at the cut is dropped (where the cut falls depends on the checkout's path).
    const expected = data(`${line.slice(0, 199).trimEnd()}…`, `${line}\n${JSON.stringify(opened.structuredContent)}`);
    assert.equal(await hookOn("open_reader", openArgs, opened), expected);

    const channel = opened.structuredContent!.channel_id as string;
    assert.notEqual((await call("reader_record", recordArgs(channel))).isError, true);
    const stateArgs = { channel_id: channel };
    const state = await call("reader_state", stateArgs);
    const stateLine = textOf(state);
    const output = await hookOn("reader_state", stateArgs, state);
    assert.equal(output, data(stateLine, `${stateLine}\n${JSON.stringify(state.structuredContent)}`));
    assert.match(output, /Hedgehogs hibernate\.[\s\S]*Why dawn\?/, "the document and the thread reach the model");
  });

  test("data too long to hand over whole is left to the tool's own result (never cut: a poll has cleared it)", async () => {
    const channel = "hook-big";
    for (let i = 0; i < 3; i++) await call("notify_agent", { channel_id: channel, event: "ask", data: { text: "x".repeat(MAX_CONTEXT_CHARS / 3) } });
    const args = { channel_id: channel };
    const result = await call("poll_agent_messages", args);
    assert.ok(textOf(result).length > MAX_CONTEXT_CHARS);
    assert.equal(await hookOn("poll_agent_messages", args, result), "");
  });
});

describe("stays silent, exit 0", () => {
  test("for other tools, other events and error results", async () => {
    const errored = await call("read_recipe", { name: "no-such-recipe" });
    assert.equal(errored.isError, true);
    const inputs: [string, string][] = [
      ["another server's tool", hookInput("create_issue", { title: "x" }, { content: [{ type: "text", text: "Created issue #1" }] }, "github")],
      [
        "a built-in tool",
        JSON.stringify({
          hook_event_name: "PostToolUse",
          tool_name: "Bash",
          tool_input: { command: "ls" },
          tool_response: { stdout: "a\nb", stderr: "" },
        }),
      ],
      ["a tool name with no server", JSON.stringify({ hook_event_name: "PostToolUse", tool_name: "mcp__notify_ui", tool_response: "Sent" })],
      ["another hook event", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "mcp__backchannel__notify_ui", tool_input: {} })],
      ["an error result", hookInput("read_recipe", { name: "no-such-recipe" }, errored)],
      ["a result of no known shape", hookInput("notify_ui", {}, { ok: true })],
      ["a result without text", hookInput("notify_ui", {}, { content: [{ type: "image", data: "", mimeType: "image/png" }] })],
      // Claude Code 2.1.328: the structured result as the JSON text the model got; replacing it would cut the model's copy.
      [
        "the structured result as JSON text",
        hookInput("poll_agent_messages", { channel_id: "c" }, JSON.stringify({ messages: [], cursor: 0, pending: 0 })),
      ],
      ["a confirmation as JSON text", hookInput("notify_ui", { channel_id: "c", event: "x" }, JSON.stringify({ seq: 1, pending: 1 }))],
    ];
    for (const [name, input] of inputs) {
      const { code, stdout, stderr } = await runHook(input);
      assert.deepEqual([code, stdout, stderr], [0, "", ""], name);
    }
  });

  test("for input that is not a hook's, with one line on stderr", async () => {
    for (const input of ["not json at all", "", "[1, 2]", '{"tool_input": {}}']) {
      const { code, stdout, stderr } = await runHook(input);
      assert.equal(code, 0, input);
      assert.equal(stdout, "", input);
      assert.match(stderr, /^backchannel hook post-tool-use: stdin is not Claude Code's hook input \(.+\); nothing done\n$/, input);
    }
  });
});

test("--help gives the settings.json snippet; an unknown hook exits 1", async () => {
  const snippet =
    '{"hooks":{"PostToolUse":[{"matcher":"mcp__backchannel__.*","hooks":[{"type":"command","command":"backchannel hook post-tool-use"}]}]}}';
  const help = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, [CLI, "hook", "post-tool-use", "--help"]);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("close", () => resolve(out));
  });
  assert.ok(help.includes(snippet), help);
  assert.ok(help.includes("npx -y backchannel-mcp hook post-tool-use"), "the published package's form, for backchannel not on the PATH");
  assert.deepEqual(JSON.parse(snippet).hooks.PostToolUse[0].matcher, "mcp__backchannel__.*");
  const unknown = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, "hook", "pre-tool-use"]);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /the hooks are "stop", "post-tool-use", .*, not "pre-tool-use"/);
});
