/**
 * The scripted model for Codex CLI: the Responses API as Codex calls it through a custom
 * model provider (`wire_api = "responses"`): `POST /v1/responses`, streamed as
 * server-sent events (`response.created`, one `response.output_item.done` per item,
 * `response.completed`). Every request that carries tools is a turn, given to a
 * host-neutral policy (../host-turn.ts); anything else gets a short text or a 404.
 *
 * backchannel's tools reach the model as one `namespace` tool, `mcp__backchannel`, whose
 * description is the server's instructions; a call names the namespace and the tool.
 */
import type { ServerResponse } from "node:http";
import { END_OF_TURN, type HostAction, type HostPolicy, type HostTurn } from "../host-turn.js";
import { actionsOf, type ModelDialect, type NextId, type ScriptedModel, sendJson, startEventStream, startScriptedModel } from "../scripted-model.js";

/** Codex's namespace of backchannel's tools. */
export const CODEX_NAMESPACE = "mcp__backchannel";

/** An item of the Responses API's `input` (the fields the tests read). */
export interface ResponseItem {
  type: string;
  role?: string;
  content?: { type: string; text?: string }[];
  name?: string;
  namespace?: string;
  arguments?: string;
  call_id?: string;
  output?: string;
}

/** A tool as Codex declares it: a function, or a namespace of functions. */
export interface ResponsesTool {
  type: string;
  name?: string;
  description?: string;
  parameters?: unknown;
  tools?: ResponsesTool[];
}

/** The body of a `POST /v1/responses`, as far as the tests read it. */
export interface ResponsesRequest {
  model: string;
  instructions?: string;
  input: ResponseItem[];
  tools?: ResponsesTool[];
  stream?: boolean;
}

/** A turn: the request, read as a policy reads it. */
export class CodexTurn implements HostTurn {
  constructor(
    readonly request: ResponsesRequest,
    readonly index: number,
    readonly at: number,
  ) {}

  get sinceLastReply(): string {
    return this.trailing()
      .map((item) => (item.type === "function_call_output" ? (item.output ?? "") : textOf(item)))
      .join("\n");
  }

  backchannelResult(name: string): string | undefined {
    return this.outputOf((call) => call.namespace === CODEX_NAMESPACE && call.name === name);
  }

  toolResult(name: string): string | undefined {
    return this.outputOf((call) => call.namespace === undefined && call.name === name);
  }

  get toolNames(): string[] {
    return (this.request.tools ?? []).flatMap((tool) =>
      tool.type === "namespace" ? (tool.tools ?? []).map((inner) => `${tool.name}.${inner.name}`) : [tool.name ?? tool.type],
    );
  }

  /** The namespace tool of backchannel (its description holds the server's instructions), or `undefined`. */
  get namespace(): ResponsesTool | undefined {
    return (this.request.tools ?? []).find((tool) => tool.type === "namespace" && tool.name === CODEX_NAMESPACE);
  }

  /** Everything the model was shown, as text: every item and every tool's description. */
  get transcript(): string {
    const tools = (this.request.tools ?? []).map((tool) => `${tool.name}: ${tool.description ?? ""}`);
    return [this.request.instructions ?? "", ...this.request.input.map((item) => textOf(item) || item.output || ""), ...tools].join("\n");
  }

  /** The items after the model's last message or call: a prompt, a queued message, the outputs of its calls. */
  private trailing(): ResponseItem[] {
    const items = this.request.input;
    return items.slice(items.findLastIndex(isModelItem) + 1);
  }

  private outputOf(match: (call: ResponseItem) => boolean): string | undefined {
    const items = this.request.input;
    const calls = new Map(items.filter((item) => item.type === "function_call").map((item) => [item.call_id, item]));
    for (const item of this.trailing()) {
      if (item.type !== "function_call_output") continue;
      const call = calls.get(item.call_id);
      if (call && match(call)) return item.output ?? "";
    }
    return undefined;
  }
}

/** The running server: `url` + `/v1` is the provider's `base_url`. */
export type CodexModel = ScriptedModel<ResponsesRequest, CodexTurn>;

/** Starts the scripted model for Codex on a free port of 127.0.0.1. */
export function startCodexModel(policy: HostPolicy): Promise<CodexModel> {
  return startScriptedModel<ResponsesRequest, CodexTurn, HostAction>(RESPONSES_API, async (turn) => actionsOf(await policy(turn), END_OF_TURN));
}

const RESPONSES_API: ModelDialect<ResponsesRequest, CodexTurn, HostAction> = {
  isTurn: ({ method, path, body }) => method === "POST" && path === "/v1/responses" && (body?.tools?.length ?? 0) > 0,
  turn: (body, index, at) => new CodexTurn(body, index, at),
  answerTurn: (res, actions, _request, nextId) => stream(res, actions, nextId),
  answerOther(res, { method, path }, nextId) {
    if (method === "POST" && path === "/v1/responses") return stream(res, [{ text: "ok" }], nextId);
    sendJson(res, 404, { error: { type: "not_found", message: `no ${method} ${path} here` } });
  },
  errorBody: (message) => ({ error: { type: "server_error", message } }),
};

/** Streams `actions` as one response: each an output item (a message or a function call). */
function stream(res: ServerResponse, actions: HostAction[], nextId: NextId): void {
  const id = nextId("resp");
  const sendEvent = startEventStream(res);
  const send = (type: string, data: Record<string, unknown>) => sendEvent({ type, ...data }, type);
  send("response.created", { response: { id } });
  for (const action of actions) {
    const item =
      "text" in action
        ? {
            type: "message",
            id: nextId("msg"),
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: action.text, annotations: [] }],
          }
        : {
            type: "function_call",
            id: nextId("fc"),
            call_id: ("id" in action ? action.id : undefined) ?? nextId("call"),
            ...("backchannel" in action ? { namespace: CODEX_NAMESPACE, name: action.backchannel } : { name: action.tool }),
            arguments: JSON.stringify(action.input),
          };
    send("response.output_item.done", { item });
  }
  const tokens = 10;
  send("response.completed", {
    response: {
      id,
      usage: { input_tokens: tokens, output_tokens: tokens, total_tokens: 2 * tokens, input_tokens_details: null, output_tokens_details: null },
    },
  });
  res.end();
}

/** Whether an item is the model's own (its message or its call). */
function isModelItem(item: ResponseItem): boolean {
  return item.role === "assistant" || item.type === "function_call" || item.type === "reasoning";
}

/** The text of a message item. */
function textOf(item: ResponseItem): string {
  return (item.content ?? []).map((part) => part.text ?? "").join("\n");
}
