/**
 * The scripted model: a local HTTP server speaking the Anthropic Messages API as Claude
 * Code calls it (`POST /v1/messages?beta=true`, streamed as server-sent events), whose
 * replies come from a small policy per test instead of a model. Every request is
 * recorded with its arrival time, so that a test can see what the model was shown and
 * when (the HTTP side is test/support/scripted-model.ts).
 *
 * Claude Code sends two kinds of request: the main loop (with `tools`) and side calls
 * (no tools: titles, summaries). Only main-loop requests reach the policy; side calls
 * get a short text.
 */
import type { ServerResponse } from "node:http";
import {
  type Action,
  actionsOf,
  estimateTokens,
  type NextId,
  type Reply,
  type RecordedRequest as ScriptedRequest,
  type ScriptedModel,
  sendJson,
  startEventStream,
  startScriptedModel,
} from "../scripted-model.js";

/** A content block of a message, as the Messages API has it (only the fields the tests read). */
export interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
}

/** A message of the conversation. */
export interface Message {
  /** Claude Code also sends `system` messages (the deferred tools, the MCP servers' instructions). */
  role: "user" | "assistant" | "system";
  content: string | ContentBlock[];
}

/** A tool as Claude Code declares it to the model. */
export interface ModelTool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

/** The body of a `POST /v1/messages`, as far as the tests read it. */
export interface MessagesRequest {
  model: string;
  system?: string | ContentBlock[];
  messages: Message[];
  tools?: ModelTool[];
  stream?: boolean;
}

/** One request the server received (`main`: a `POST /v1/messages` with tools, given to the policy). */
export type RecordedRequest = ScriptedRequest<MessagesRequest>;

/** What the model does in one reply; a policy's answer (`undefined` ends the turn, sent as the text "Done.": Claude Code asks again after an empty reply). */
export type { Action, Reply };

/** A main-loop request, with helpers to read it. */
export class Turn {
  constructor(
    /** The request. */
    readonly request: MessagesRequest,
    /** Its place among the main-loop requests (0 first). */
    readonly index: number,
    /** `performance.now()` when it arrived. */
    readonly at: number = performance.now(),
  ) {}

  /** The system prompt as one string. */
  get system(): string {
    return textOf(this.request.system ?? "");
  }

  /** The names of the tools whose schemas were sent (loaded tools). */
  get toolNames(): string[] {
    return (this.request.tools ?? []).map((tool) => tool.name);
  }

  /** Whether `name`'s schema was sent with this request. */
  loaded(name: string): boolean {
    return this.toolNames.includes(name);
  }

  /** The last user message (a prompt, tool results, a notification); Claude Code's own `system` messages are skipped. */
  get last(): Message {
    return this.request.messages.findLast((message) => message.role === "user") ?? { role: "user", content: "" };
  }

  /** The text of the last user message, tool results excluded. */
  get lastText(): string {
    const { content } = this.last;
    if (typeof content === "string") return content;
    return content
      .filter((block) => block.type === "text")
      .map((block) => block.text ?? "")
      .join("\n");
  }

  /** The tool results in the last message, each with the name of the tool that made it. */
  get results(): { name: string; input: unknown; text: string; isError: boolean }[] {
    const { content } = this.last;
    if (typeof content === "string") return [];
    return content
      .filter((block) => block.type === "tool_result")
      .map((block) => {
        const use = this.toolUse(block.tool_use_id ?? "");
        return { name: use?.name ?? "", input: use?.input, text: textOf(block.content ?? ""), isError: block.is_error === true };
      });
  }

  /** The result of `name` in the last message, or `undefined`. */
  result(name: string): { input: unknown; text: string; isError: boolean } | undefined {
    return this.results.find((result) => result.name === name);
  }

  /** The whole conversation as text (system prompt, every message, tool results): for searching. */
  get transcript(): string {
    return [this.system, ...this.request.messages.map((message) => textOf(message.content))].join("\n");
  }

  private toolUse(id: string): ContentBlock | undefined {
    for (const message of this.request.messages) {
      if (typeof message.content === "string") continue;
      const use = message.content.find((block) => block.type === "tool_use" && block.id === id);
      if (use) return use;
    }
    return undefined;
  }
}

/** A test's model: given a main-loop request, what to do. It may be async. */
export type Policy = (turn: Turn) => Reply | Promise<Reply>;

/** The running server: `url` is Claude Code's `ANTHROPIC_BASE_URL`. */
export type ModelServer = ScriptedModel<MessagesRequest, Turn>;

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  /**
   * Load deferred tools first: when the policy calls a tool whose schema was not sent,
   * the server calls `ToolSearch {"query": "select:<name>"}` instead, and makes the
   * policy's call in reply to its result. Default true.
   */
  toolSearch?: boolean;
}

/** Starts the scripted model on a free port of 127.0.0.1. */
export function startModelServer(policy: Policy, options: ModelServerOptions = {}): Promise<ModelServer> {
  const toolSearch = options.toolSearch ?? true;
  /** Calls held back while ToolSearch loads their tools, by the ToolSearch call's id. */
  const held = new Map<string, Action[]>();

  const decide = async (turn: Turn, nextId: NextId): Promise<Action[]> => {
    // A reply to ToolSearch the server made itself: make the calls it held back.
    for (const block of blocksOf(turn.last)) {
      const waiting = block.type === "tool_result" ? held.get(block.tool_use_id ?? "") : undefined;
      if (waiting) {
        held.delete(block.tool_use_id ?? "");
        return waiting;
      }
    }
    // An empty reply would make Claude Code ask again: the end of a turn says something.
    const actions = actionsOf(await policy(turn), { text: "Done." });
    if (!toolSearch) return actions;
    const missing = actions.flatMap((action) => ("tool" in action && !turn.loaded(action.tool) ? [action.tool] : []));
    if (missing.length === 0 || !turn.loaded("ToolSearch")) return actions;
    // Load the missing schemas first; the policy's whole reply follows ToolSearch's result.
    const id = nextId("toolu");
    held.set(id, actions);
    return [{ tool: "ToolSearch", id, input: { query: `select:${[...new Set(missing)].join(",")}`, max_results: missing.length } }];
  };

  return startScriptedModel<MessagesRequest, Turn, Action>(
    {
      isTurn: ({ method, path, body }) => method === "POST" && path === "/v1/messages" && (body?.tools?.length ?? 0) > 0,
      turn: (body, index, at) => new Turn(body, index, at),
      answerTurn: (res, actions, { body, raw }, nextId) => answer(res, body, raw, actions, nextId),
      answerOther(res, { method, path, raw, body }, nextId) {
        if (method === "POST" && path === "/v1/messages/count_tokens") return sendJson(res, 200, { input_tokens: estimateTokens(raw) });
        // Side calls (no tools: titles, summaries) get a short text.
        if (method === "POST" && path === "/v1/messages" && body) return answer(res, body, raw, [{ text: "ok" }], nextId);
        // Anything else Claude Code asks (it asks nothing else with nonessential traffic off): an API-shaped 404.
        sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no ${method} ${path} here` } });
      },
      errorBody: (message) => ({ type: "error", error: { type: "api_error", message } }),
    },
    decide,
  );
}

/** Answers `body` (whose text is `raw`) with `actions`: one assistant message, streamed when the request asked for it. */
function answer(res: ServerResponse, body: MessagesRequest, raw: string, actions: Action[], nextId: NextId): void {
  const blocks = actions.map((action) =>
    "text" in action
      ? { type: "text", text: action.text }
      : { type: "tool_use", id: action.id ?? nextId("toolu"), name: action.tool, input: action.input },
  );
  const message = {
    id: nextId("msg"),
    type: "message",
    role: "assistant",
    model: body.model,
    content: blocks,
    stop_reason: blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: estimateTokens(raw), output_tokens: estimateTokens(JSON.stringify(blocks)) },
  };
  if (body.stream) stream(res, message);
  else sendJson(res, 200, message);
}

/** The text of a string or of a list of blocks (text, and tool results' text, joined by newlines). */
export function textOf(content: string | ContentBlock[]): string {
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      if (block.type === "text") return block.text ?? "";
      if (block.type === "tool_result") return textOf(block.content ?? "");
      if (block.type === "tool_use") return JSON.stringify({ tool_use: block.name, input: block.input });
      return "";
    })
    .join("\n");
}

function blocksOf(message: Message): ContentBlock[] {
  return typeof message.content === "string" ? [] : message.content;
}

/** Sends `message` as the Messages API streams it: start, each block (start, one delta, stop), delta, stop. */
function stream(res: ServerResponse, message: { content: ContentBlock[]; usage: { output_tokens: number }; stop_reason: string }): void {
  const sendEvent = startEventStream(res);
  const send = (event: string, data: unknown) => sendEvent(data, event);
  send("message_start", {
    type: "message_start",
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    } else {
      send("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      send("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    }
    send("content_block_stop", { type: "content_block_stop", index });
  });
  send("message_delta", {
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  send("message_stop", { type: "message_stop" });
  res.end();
}
