/**
 * A scripted model that does what backchannel's instructions tell it, as Claude Code
 * shows them (the "MCP Server Instructions" section of the conversation): open the
 * reader, arm the watcher, and on each wake poll, answer every message with notify_ui and
 * re-arm, all in one reply. The tool calls it makes are the ones written in the
 * instructions, placeholders filled; the watcher command is the one open_reader returned,
 * checked against the instructions'.
 *
 * Two wakes: `exit` (the watcher in background Bash; a `<task-notification>` per exit) and
 * `monitor` (`watch --follow` under the Monitor tool, as the background-watcher recipe
 * writes it; a notification per line).
 */
import { backchannelCommand } from "../../../core/commands.js";
import { commands, fill, findCall, toolCalls, type WrittenToolCall } from "../recipe-text.js";
import type { Action, Policy, Turn } from "./model-server.js";

/** Claude Code's name for a tool of the MCP server `backchannel`. */
export function hostTool(name: string): string {
  return `mcp__backchannel__${name}`;
}

/** How the model is woken. */
export type Wake = "exit" | "monitor";

/** What the model did, for the test to check. */
export interface ReaderLoop {
  policy: Policy;
  /** Resolves with the channel once open_reader has answered. */
  opened: Promise<{ channelId: string; watchCommand: string }>;
  /** Thread ids answered, in order. */
  answered: string[];
  /** Wake turns: one per task notification (or Monitor event) that reached the model, with its arrival time. */
  wakes: { at: number; text: string }[];
  /** Times it armed the watcher (the first time included). */
  arms: number;
  /** Follow mode: the Monitor input it used (from the background-watcher recipe). */
  monitor?: Record<string, unknown>;
}

/** Options of {@link readerLoopPolicy}. */
export interface ReaderLoopOptions {
  wake: Wake;
  /** The document for open_reader's `markdown` (the instructions write "..."). Default the instructions' "...". */
  markdown?: string;
}

/**
 * The policy, and what it records. Its first turn (any prompt) opens the reader.
 * @throws (inside the policy, answered as HTTP 500 and kept in the model server's `errors`)
 *   when the instructions lack a step or disagree with open_reader's watch_command.
 */
export function readerLoopPolicy(options: ReaderLoopOptions): ReaderLoop {
  let channelId = "";
  let watchCommand = "";
  let resolveOpened!: (value: { channelId: string; watchCommand: string }) => void;
  const loop: ReaderLoop = {
    policy: () => undefined,
    opened: new Promise((resolve) => (resolveOpened = resolve)),
    answered: [],
    wakes: [],
    arms: 0,
  };

  /** Follow mode: the Monitor call written in the background-watcher recipe, filled in. */
  let monitor: Action | undefined;
  const arm = (): Action => {
    loop.arms += 1;
    if (options.wake === "exit")
      return { tool: "Bash", input: { command: watchCommand, run_in_background: true, description: "backchannel watcher" } };
    return monitor!;
  };

  loop.policy = (turn: Turn) => {
    const calls = instructionCalls(turn);
    const opened = turn.result(hostTool("open_reader"));
    if (opened) {
      const result = resultData<{ channel_id: string; watch_command: string }>(turn, "open_reader", opened.text);
      channelId = result.channel_id;
      watchCommand = result.watch_command;
      const written = fill(commands(instructionText(turn), backchannelCommand())[0] ?? "", { channel_id: channelId });
      if (written !== watchCommand)
        throw new Error(`the instructions write the watcher as ${JSON.stringify(written)}, open_reader returned ${JSON.stringify(watchCommand)}`);
      resolveOpened({ channelId, watchCommand });
      // Follow mode: the instructions send the model to the recipes for Monitor.
      return options.wake === "exit" ? arm() : { tool: hostTool("read_recipe"), input: { name: "background-watcher" } };
    }
    const recipe = turn.result(hostTool("read_recipe"));
    if (recipe) {
      monitor = monitorCall(resultData<{ recipe: { text: string } }>(turn, "read_recipe", recipe.text).recipe.text, channelId);
      loop.monitor = monitor.input;
      return arm();
    }
    // Claude Code puts a notification that came during a turn in the same message as the
    // turn's tool results, so both are read from the last message.
    const text = turn.lastText;
    const exit = options.wake === "exit" ? /<task-notification>[\s\S]*?\(exit code (\d+)\)/.exec(text) : null;
    const event = options.wake === "monitor" && channelId !== "" && text.includes(channelId);
    const woken = exit !== null || event;
    if (woken) loop.wakes.push({ at: turn.at, text });
    const replies: Action[] = [];
    const polled = turn.result(hostTool("poll_agent_messages"));
    if (polled) {
      for (const message of resultData<{ messages: { event: string; data: { thread_id?: string; question?: string } }[] }>(
        turn,
        "poll_agent_messages",
        polled.text,
      ).messages) {
        if (message.event === "ready") replies.push(call(findCall(calls, "notify_ui", { event: "hello" }), { channel_id: channelId }));
        if (message.event === "ask") {
          const reply = call(findCall(calls, "notify_ui", { event: "answer" }), { channel_id: channelId, thread_id: message.data.thread_id ?? "" });
          (reply.input.data as Record<string, unknown>).text = `Answer to “${message.data.question}”.`;
          replies.push(reply);
          loop.answered.push(message.data.thread_id ?? "");
        }
      }
    }
    if (exit?.[1] === "0" || event) replies.push(call(findCall(calls, "poll_agent_messages"), { channel_id: channelId }));
    // Exit mode runs the watcher again after each poll (and when it timed out, exit 2), as
    // the instructions say; not while a poll is still to come. Follow mode's keeps running.
    else if (options.wake === "exit" && (polled || exit)) replies.push(arm());
    if (replies.length > 0) return replies;
    if (channelId || turn.results.length > 0) return { text: "Waiting for the reader." }; // nothing to do: the turn ends
    const open = call(findCall(calls, "open_reader"), {});
    if (options.markdown !== undefined) open.input.markdown = options.markdown;
    return open;
  };
  return loop;
}

/**
 * The text of backchannel's section of "MCP Server Instructions" (up to the next section
 * Claude Code adds), headed by the server's name: `backchannel`, or the plugin's
 * `plugin:backchannel:backchannel`.
 */
export function instructionText(turn: Turn): string {
  const text = turn.transcript;
  const start = text.search(/^## (?:plugin:backchannel:)?backchannel\n/m);
  if (start < 0) throw new Error("backchannel's instructions are not in the conversation");
  const rest = text.slice(start);
  const end = rest.search(/\n(?:#{1,2} |The following skills)/);
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * The Monitor call the background-watcher recipe writes: its `--follow` command and the
 * `timeout_ms` its text gives, for `channelId`.
 * @throws when the recipe writes either not.
 */
export function monitorCall(recipe: string, channelId: string): { tool: string; input: Record<string, unknown> } {
  const command = commands(recipe, backchannelCommand()).find((line) => line.includes(" --follow"));
  const timeout = /Monitor tool \(`timeout_ms` (\d+)\)/.exec(recipe);
  if (!command || !timeout) throw new Error("the background-watcher recipe writes no Monitor command with its timeout_ms");
  return {
    tool: "Monitor",
    input: { command: fill(command, { channel_id: channelId }), description: "backchannel watcher", timeout_ms: Number(timeout[1]) },
  };
}

function instructionCalls(turn: Turn): WrittenToolCall[] {
  return toolCalls(instructionText(turn));
}

/** A written call made by the model: the host's tool name, placeholders filled. */
function call(written: WrittenToolCall, values: Record<string, string>): { tool: string; input: Record<string, unknown> } {
  return { tool: hostTool(written.name), input: fill(structuredClone(written.args), values) };
}

/**
 * A tool result's data: its JSON (Claude Code shows the model a tool's structuredContent
 * as JSON), or, when a PostToolUse hook replaced it with a line that is not whole JSON,
 * the hook's additional context for that tool, as a model would read it.
 * @throws when neither holds JSON.
 */
function resultData<T>(turn: Turn, tool: string, text: string): T {
  const parsed = parseJson<T>(text);
  if (parsed !== undefined) return parsed;
  const marker = `PostToolUse:${hostTool(tool)} hook additional context: `;
  const context = turn.transcript.split(marker).pop() ?? "";
  const line = context.split("\n").find((candidate) => parseJson(candidate) !== undefined);
  if (line === undefined) throw new Error(`no JSON in the ${tool} result ${JSON.stringify(text.slice(0, 200))} nor in a hook's context`);
  return parseJson<T>(line)!;
}

function parseJson<T>(text: string): T | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start)) as T;
  } catch {
    return undefined;
  }
}
