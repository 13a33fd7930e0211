/**
 * `backchannel hook permission-request` as Claude Code runs it (the plugin's
 * PermissionRequest hook): a real process fed the hook's input as Claude Code 2.1.328
 * sends it. It allows a call of the plugin's server that Claude Code offers to always
 * allow, with a rule for the session; it stays silent on anything else, so that the
 * person's ask rules and any other server's tools are asked about as usual. (In the real
 * Claude Code: test/claude-code-plugin.test.ts.)
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type CommandRun, runCommand } from "./support/helpers.js";

/** Runs the hook with `input` on stdin, to its exit. */
function hook(input: string): Promise<CommandRun> {
  return runCommand(["hook", "permission-request"], input);
}

/** A PermissionRequest's input for `tool`, as Claude Code sends it; `offered`: with its offer to always allow the tool. */
function request(tool: string, offered: boolean): string {
  return JSON.stringify({
    session_id: "037838e7-58ec-40c7-bc67-d404e58fce6a",
    cwd: "/tmp/work",
    permission_mode: "default",
    hook_event_name: "PermissionRequest",
    tool_name: tool,
    tool_input: { title: "Notes" },
    ...(offered
      ? { permission_suggestions: [{ type: "addRules", rules: [{ toolName: tool }], behavior: "allow", destination: "localSettings" }] }
      : {}),
    mcp_server: { name: "plugin:backchannel:backchannel", source: "plugin" },
  });
}

describe("allows the plugin's tools for the session", () => {
  test("a call Claude Code offers to always allow: allowed, with every tool of the plugin's server for the session", async () => {
    const run = await hook(request("mcp__plugin_backchannel_backchannel__open_reader", true));
    assert.equal(run.code, 0);
    assert.deepEqual(JSON.parse(run.stdout), {
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: {
          behavior: "allow",
          updatedPermissions: [
            { type: "addRules", rules: [{ toolName: "mcp__plugin_backchannel_backchannel" }], behavior: "allow", destination: "session" },
          ],
        },
      },
    });
  });
});

describe("stays silent, exit 0", () => {
  test("where the person's ask rule made Claude Code ask (no offer to always allow), for other servers' tools, other events, junk", async () => {
    for (const input of [
      request("mcp__plugin_backchannel_backchannel__notify_ui", false),
      request("mcp__other__delete_everything", true),
      request("mcp__plugin_backchannel_backchannel_evil__notify_ui", true),
      request("Bash", true),
      JSON.stringify({ ...JSON.parse(request("mcp__plugin_backchannel_backchannel__notify_ui", true)), hook_event_name: "PreToolUse" }),
      JSON.stringify({
        ...JSON.parse(request("mcp__plugin_backchannel_backchannel__notify_ui", true)),
        permission_suggestions: [{ type: "setMode" }],
      }),
      "not json",
      "[]",
      "",
    ]) {
      const run = await hook(input);
      assert.deepEqual([run.code, run.stdout, run.stderr], [0, "", ""], input.slice(0, 120));
    }
  });
});
