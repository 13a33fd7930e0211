/**
 * `backchannel hook post-tool-use`: Claude Code's PostToolUse hook for backchannel's
 * tools. The human's tool panel gets one line (`updatedToolOutput`); for tools that
 * return data, the model still gets all of it (`additionalContext`).
 *
 * It never breaks the session: any other tool, an error result, a result too long to
 * pass on whole, or input it cannot read (or more than 8 MiB of it) leads to no output
 * at all, and Claude Code then keeps the tool's own result. The panel line is made safe
 * for the terminal (`oneLine`): the tool's text may carry anything the model or the
 * app wrote.
 */
import type { JsonValue } from "../core/json.js";
import { HOOK_SUMMARY_CHARS } from "../core/limits.js";
import { oneLine } from "../core/text.js";
import { toolKind } from "../protocol/tool-kinds.js";
import { MAX_STDIN_BYTES, readStdin } from "./stdin.js";

/**
 * Longest `additionalContext` handed over. Claude Code cuts hook strings at 10,000
 * characters; a longer result is left as the tool returned it instead of cut, because
 * `poll_agent_messages` has already cleared what it returned: cut, it would be lost.
 */
export const MAX_CONTEXT_CHARS = 9000;

/** What the hook prints: Claude Code's PostToolUse output. */
export interface PostToolUseOutput {
  hookSpecificOutput: {
    hookEventName: "PostToolUse";
    /** Replaces the tool's result: one line, for the human's tool panel. */
    updatedToolOutput: string;
    /** For the model: the result's full data (data tools only). */
    additionalContext?: string;
  };
}

/** A tool result reduced to what the hook uses. */
interface ResultView {
  text: string;
  structured?: JsonValue;
  isError: boolean;
  /** The host handed over the result as the model got it, its data as one JSON text (docs/hosts.md). */
  asModelGotIt?: boolean;
}

/**
 * The hook's output for one parsed hook input, or `undefined` when the hook must stay
 * silent (not a PostToolUse of one of backchannel's tools, an error result, no text, or
 * data longer than {@link MAX_CONTEXT_CHARS}).
 * @throws TypeError when `input` is not a hook input object with a `tool_name`.
 */
export function postToolUseOutput(input: JsonValue): PostToolUseOutput | undefined {
  if (typeof input !== "object" || input === null || Array.isArray(input) || typeof input.tool_name !== "string") {
    throw new TypeError("it is not a hook input object with a tool_name");
  }
  if (input.hook_event_name !== undefined && input.hook_event_name !== "PostToolUse") return undefined;
  const kind = toolKind(toolNameOf(input.tool_name) ?? "");
  const result = kind === undefined ? undefined : viewOf(input.tool_response);
  if (kind === undefined || result === undefined || result.isError) return undefined;
  // Claude Code 2.1.328 gives the model the structured result as JSON and hands the hook
  // that same text; its updatedToolOutput then replaces what the model gets, not only the
  // panel's line. The model already has the data whole: a summary would cut it, and the
  // context would send it twice.
  if (result.asModelGotIt) return undefined;
  const summary = firstLine(result.text);
  if (summary === "") return undefined;
  if (kind === "confirmation") return { hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: summary } };
  // Our text results are a summary line, then the data when there is any to show; a
  // one-line text means the data is only in structuredContent.
  const oneLine = !result.text.trim().includes("\n");
  const context = oneLine && result.structured !== undefined ? `${result.text.trim()}\n${JSON.stringify(result.structured)}` : result.text;
  if (context.length > MAX_CONTEXT_CHARS) return undefined;
  return { hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: summary, additionalContext: context } };
}

/**
 * Runs the hook: reads the input JSON from stdin, prints the output JSON as one line
 * on stdout, or nothing. A note goes to stderr when stdin is not a hook input.
 * @returns 0, always: a hook must never fail the tool call.
 */
export async function runPostToolUseHook(): Promise<number> {
  const text = await readStdin();
  if (text === undefined) {
    process.stderr.write(`backchannel hook post-tool-use: stdin holds more than ${MAX_STDIN_BYTES} bytes; nothing done\n`);
    return 0;
  }
  let output: PostToolUseOutput | undefined;
  try {
    output = postToolUseOutput(JSON.parse(text) as JsonValue);
  } catch (error) {
    // JSON.parse's message quotes the input: it goes through oneLine like the output.
    process.stderr.write(
      `backchannel hook post-tool-use: stdin is not Claude Code's hook input (${oneLine((error as Error).message)}); nothing done\n`,
    );
    return 0;
  }
  if (output) process.stdout.write(`${JSON.stringify(output)}\n`);
  return 0;
}

/**
 * The tool of an MCP tool name: what follows the last `__` of `mcp__<server>__<tool>`
 * or `mcp__plugin_<plugin>_<server>__<tool>`, whatever the user named the server;
 * `undefined` for a tool that is not an MCP tool.
 */
function toolNameOf(name: string): string | undefined {
  const last = name.lastIndexOf("__");
  return name.startsWith("mcp__") && last > "mcp_".length ? name.slice(last + 2) : undefined;
}

/**
 * A tool result in any of the shapes `tool_response` may take (the host does not
 * document it exactly): a CallToolResult-like object, a bare content array, or a string.
 */
function viewOf(response: JsonValue | undefined): ResultView | undefined {
  if (typeof response === "string") return { text: response, isError: false, asModelGotIt: isJsonObjectText(response) };
  if (Array.isArray(response)) return { text: textOf(response), isError: false };
  if (typeof response !== "object" || response === null || !Array.isArray(response.content)) return undefined;
  return {
    text: textOf(response.content),
    isError: response.isError === true,
    ...(response.structuredContent !== undefined ? { structured: response.structuredContent } : {}),
  };
}

/** Whether `text` is one JSON object, as a structured result given to the model is. */
function isJsonObjectText(text: string): boolean {
  if (!text.trimStart().startsWith("{")) return false;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** The text blocks of an MCP content array, joined by newlines. */
function textOf(content: JsonValue[]): string {
  const texts: string[] = [];
  for (const block of content) {
    if (typeof block === "object" && block !== null && !Array.isArray(block) && block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    }
  }
  return texts.join("\n");
}

/** The first non-blank line of `text`, made safe for a terminal and cut to {@link HOOK_SUMMARY_CHARS}. */
function firstLine(text: string): string {
  return oneLine(text.trimStart().split("\n", 1)[0]!, HOOK_SUMMARY_CHARS);
}
