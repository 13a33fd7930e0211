/**
 * The scripted model for mcp-use's inspector: OpenAI Chat Completions as its chat page
 * calls an "OpenAI Compatible" provider (`GET /v1/models` for the model list, then
 * `POST /v1/chat/completions`, streamed as server-sent events), with CORS, since the page
 * calls it from the browser. Replies come from a test's policy instead of a model.
 *
 * The page sends two kinds of request: the chat's turns (with `tools`) and a title call
 * (no tools, not streamed). Only turns reach the policy; the title call gets a short text.
 */
import type { ServerResponse } from "node:http";
import {
  type Action,
  actionsOf,
  estimateTokens,
  type NextId,
  type Reply,
  type ScriptedModel,
  sendJson,
  startEventStream,
  startScriptedModel,
} from "../scripted-model.js";

export type { Action, Reply };

/** A tool call in an assistant message. */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A message of the conversation, as the page sends it. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  /** A string (the page sends strings), or parts. */
  content: string | { type: string; text?: string }[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

/** A tool as the page declares it to the model. */
export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters?: unknown };
}

/** The body of a `POST /v1/chat/completions`, as far as the tests read it. */
export interface CompletionRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean;
}

/** The name of the one model `/v1/models` lists. */
export const MODEL_ID = "scripted";

/** A chat turn: one request with tools, with helpers to read what the page showed the model. */
export class ChatTurn {
  constructor(
    /** The request. */
    readonly request: CompletionRequest,
    /** Its place among the turns (0 first). */
    readonly index: number,
    /** `performance.now()` when it arrived. */
    readonly at: number,
  ) {}

  /** Every system message's text, in order (the page's prompt, then what apps put in the model's context). */
  get system(): string[] {
    return this.request.messages.filter((message) => message.role === "system").map((message) => textOf(message.content));
  }

  /** The names of the tools the page declared. */
  get toolNames(): string[] {
    return (this.request.tools ?? []).map((tool) => tool.function.name);
  }

  /**
   * The messages this request added: the trailing tool results, or the trailing user
   * message. (Not "everything after the last assistant message": the page replays an
   * earlier turn as one assistant message, its closing text merged into the message
   * that called the tools, followed by their results.)
   */
  get since(): ChatMessage[] {
    const messages = this.request.messages;
    const last = messages.at(-1);
    if (last?.role !== "tool") return last?.role === "user" ? [last] : [];
    const first = messages.findLastIndex((message) => message.role !== "tool");
    return messages.slice(first + 1);
  }

  /** The text of the user message this request added, else "". */
  get userText(): string {
    const user = this.since.find((message) => message.role === "user");
    return user ? textOf(user.content) : "";
  }

  /** The results of the tools the model called in its last reply, each with its call. */
  get results(): { name: string; input: unknown; text: string }[] {
    const calls = this.request.messages.flatMap((message) => message.tool_calls ?? []);
    return this.since
      .filter((message) => message.role === "tool")
      .map((message) => {
        const call = calls.find((candidate) => candidate.id === message.tool_call_id);
        return { name: call?.function.name ?? "", input: parseJson(call?.function.arguments ?? ""), text: textOf(message.content) };
      });
  }

  /** The result of `name` among {@link results}, or `undefined`. */
  result(name: string): { input: unknown; text: string } | undefined {
    return this.results.find((result) => result.name === name);
  }
}

/** A test's model: given a turn, what to do; `undefined` ends the turn with the text "Done.". It may be async. */
export type ChatPolicy = (turn: ChatTurn) => Reply | Promise<Reply>;

/** The running server: its `url` + `/v1` is the provider's base URL. */
export type ChatModelServer = ScriptedModel<CompletionRequest, ChatTurn>;

/** Starts the scripted model on a free port of 127.0.0.1. */
export function startChatModel(policy: ChatPolicy): Promise<ChatModelServer> {
  return startScriptedModel<CompletionRequest, ChatTurn, Action>(
    {
      cors: true,
      isTurn: ({ method, path, body }) => method === "POST" && path === "/v1/chat/completions" && (body?.tools?.length ?? 0) > 0,
      turn: (body, index, at) => new ChatTurn(body, index, at),
      answerTurn: (res, actions, { body, raw }, nextId) => answer(res, body, raw, actions, nextId),
      answerOther(res, { method, path, raw, body }, nextId) {
        if (method === "GET" && path === "/v1/models")
          return sendJson(res, 200, { object: "list", data: [{ id: MODEL_ID, object: "model", created: 0, owned_by: "backchannel-tests" }] });
        if (method === "POST" && path === "/v1/chat/completions" && body) return answer(res, body, raw, [{ text: "Reading together" }], nextId);
        sendJson(res, 404, { error: { type: "invalid_request_error", message: `no ${method} ${path} here` } });
      },
      errorBody: (message) => ({ error: { type: "server_error", message } }),
    },
    async (turn) => actionsOf(await policy(turn), { text: "Done." }),
  );
}

/** Answers with `actions`: one assistant message (its texts joined, its tool calls), streamed when asked. */
function answer(res: ServerResponse, body: CompletionRequest, raw: string, actions: Action[], nextId: NextId): void {
  const text = actions.flatMap((action) => ("text" in action ? [action.text] : [])).join("\n");
  const calls: ToolCall[] = actions.flatMap((action) =>
    "tool" in action
      ? [{ id: action.id ?? nextId("call"), type: "function" as const, function: { name: action.tool, arguments: JSON.stringify(action.input) } }]
      : [],
  );
  const id = nextId("chatcmpl");
  const finish = calls.length > 0 ? "tool_calls" : "stop";
  const usage = { prompt_tokens: estimateTokens(raw), completion_tokens: estimateTokens(text + JSON.stringify(calls)) };
  const base = { id, created: Math.floor(Date.now() / 1000), model: body.model };
  if (!body.stream) {
    const message = { role: "assistant", content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
    sendJson(res, 200, { ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage });
    return;
  }
  const sendEvent = startEventStream(res);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    sendEvent({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finishReason }] });
  chunk({ role: "assistant", content: "" }, null);
  if (text) chunk({ content: text }, null);
  if (calls.length > 0) chunk({ tool_calls: calls.map((call, index) => ({ index, ...call })) }, null);
  chunk({}, finish);
  res.write("data: [DONE]\n\n");
  res.end();
}

/** The text of a message's content. */
export function textOf(content: ChatMessage["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join("\n");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
