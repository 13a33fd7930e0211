/**
 * `backchannel hook permission-request`: the plugin's PermissionRequest hook, which lets
 * the plugin's tools run without asking, once a session.
 *
 * Claude Code runs it where it would ask the person to allow one of the plugin's tools.
 * It allows the call and adds a rule for this session that allows every tool of the
 * plugin's server, so that Claude Code asks no more, and the hook runs no more, until
 * the session ends (a hook per tool call, as a PreToolUse hook is, costs a process on
 * the way of every answer).
 *
 * The person's own rules still win. A deny rule is applied before any hook. An ask rule
 * makes Claude Code ask whatever is allowed, and then it offers no "always allow"
 * (`permission_suggestions` is absent, Claude Code 2.1.328): the hook allows only a call
 * Claude Code itself offers to always allow, and stays silent on any other, which Claude
 * Code then asks about as usual (`claude -p` refuses it). It never fails the session:
 * input it cannot read leads to no output, and it always exits 0.
 */
import type { JsonValue } from "../core/json.js";
import { readStdin } from "./stdin.js";

/** The plugin's MCP server as Claude Code names its tools: `mcp__plugin_<plugin>_<server>`. */
export const PLUGIN_SERVER_RULE = "mcp__plugin_backchannel_backchannel";

/** What the hook prints: Claude Code's PermissionRequest output. */
export interface PermissionRequestOutput {
  hookSpecificOutput: {
    hookEventName: "PermissionRequest";
    decision: {
      behavior: "allow";
      /** A rule for this session only: every tool of the plugin's server is allowed. */
      updatedPermissions: { type: "addRules"; rules: { toolName: string }[]; behavior: "allow"; destination: "session" }[];
    };
  };
}

/**
 * The hook's output for one parsed hook input: allow, with the session's rule, when it
 * asks about a tool of the plugin's server and Claude Code offers to always allow it;
 * `undefined` (stay silent, Claude Code asks as usual) for anything else.
 */
export function permissionRequestOutput(input: JsonValue): PermissionRequestOutput | undefined {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  if (input.hook_event_name !== "PermissionRequest" || typeof input.tool_name !== "string") return undefined;
  if (!input.tool_name.startsWith(`${PLUGIN_SERVER_RULE}__`)) return undefined;
  const suggestions = Array.isArray(input.permission_suggestions) ? input.permission_suggestions : [];
  const alwaysAllowOffered = suggestions.some(
    (suggestion) =>
      typeof suggestion === "object" &&
      suggestion !== null &&
      !Array.isArray(suggestion) &&
      suggestion.type === "addRules" &&
      suggestion.behavior === "allow",
  );
  if (!alwaysAllowOffered) return undefined;
  const rule = { type: "addRules" as const, rules: [{ toolName: PLUGIN_SERVER_RULE }], behavior: "allow" as const, destination: "session" as const };
  return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedPermissions: [rule] } } };
}

/**
 * Reads the hook input on stdin and prints the output of {@link permissionRequestOutput},
 * or nothing.
 * @returns 0, always: a hook that fails would show the person an error.
 */
export async function runPermissionRequestHook(): Promise<number> {
  const text = await readStdin();
  let input: JsonValue;
  try {
    input = JSON.parse(text ?? "") as JsonValue;
  } catch {
    return 0;
  }
  const output = permissionRequestOutput(input);
  if (output) process.stdout.write(`${JSON.stringify(output)}\n`);
  return 0;
}
