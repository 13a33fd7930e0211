/**
 * The scripted model for Gemini CLI: the Gemini API as Gemini CLI calls it behind
 * `GOOGLE_GEMINI_BASE_URL`. The main loop is `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
 * (one SSE chunk per reply here), given to a host-neutral policy (../host-turn.ts). The
 * side calls are answered too: the model router (`:generateContent` with a JSON schema
 * of `complexity_reasoning` and `complexity_score`, answered "simple"), titles and
 * anything else `:generateContent` (a short text), `:countTokens`.
 *
 * backchannel's tools reach the model as `mcp_backchannel_<tool>` function declarations.
 */
import { END_OF_TURN, type HostAction, type HostPolicy, type HostTurn } from "../host-turn.js";
import { actionsOf, type ModelDialect, type ScriptedModel, sendJson, startEventStream, startScriptedModel } from "../scripted-model.js";

/** Gemini CLI's name for backchannel's tool `name`. */
export function geminiTool(name: string): string {
  return `mcp_backchannel_${name}`;
}

/** A part of a content (the fields the tests read). */
export interface Part {
  text?: string;
  functionCall?: { name: string; args?: Record<string, unknown> };
  functionResponse?: { name: string; response?: Record<string, unknown> };
}

/** A content of the conversation. */
export interface Content {
  role?: string;
  parts: Part[];
}

/** A function declaration of a request's tools. */
export interface FunctionDeclaration {
  name: string;
  description?: string;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
}

/** The body of a Gemini API request, as far as the tests read it. */
export interface GenerateRequest {
  contents: Content[];
  tools?: { functionDeclarations?: FunctionDeclaration[] }[];
  systemInstruction?: Content | string;
  generationConfig?: Record<string, unknown>;
}

/** A turn: the request, read as a policy reads it. */
export class GeminiTurn implements HostTurn {
  constructor(
    readonly request: GenerateRequest,
    readonly index: number,
    readonly at: number,
  ) {}

  get sinceLastReply(): string {
    return this.trailing()
      .flatMap((content) => content.parts.map((part) => part.text ?? (part.functionResponse ? outputOf(part) : "")))
      .join("\n");
  }

  backchannelResult(name: string): string | undefined {
    return this.toolResult(geminiTool(name));
  }

  toolResult(name: string): string | undefined {
    for (const content of this.trailing()) for (const part of content.parts) if (part.functionResponse?.name === name) return outputOf(part);
    return undefined;
  }

  get toolNames(): string[] {
    return this.declarations.map((declaration) => declaration.name);
  }

  /** Every function declaration sent. */
  get declarations(): FunctionDeclaration[] {
    return (this.request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  }

  /** Everything the model was shown, as text: the system instruction, every part, every declaration. */
  get transcript(): string {
    const system =
      typeof this.request.systemInstruction === "string" ? this.request.systemInstruction : partsText(this.request.systemInstruction?.parts ?? []);
    const parts = this.request.contents.map((content) => partsText(content.parts));
    return [system, ...parts, ...this.declarations.map((declaration) => `${declaration.name}: ${declaration.description ?? ""}`)].join("\n");
  }

  /** The contents after the model's last one: a prompt, a hook's reason, function responses. */
  private trailing(): Content[] {
    const contents = this.request.contents;
    return contents.slice(contents.findLastIndex((content) => content.role === "model") + 1);
  }
}

/** The running server: `url` is Gemini CLI's `GOOGLE_GEMINI_BASE_URL`. */
export type GeminiModel = ScriptedModel<GenerateRequest, GeminiTurn>;

/** Starts the scripted model for Gemini CLI on a free port of 127.0.0.1. */
export function startGeminiModel(policy: HostPolicy): Promise<GeminiModel> {
  return startScriptedModel<GenerateRequest, GeminiTurn, HostAction>(GEMINI_API, async (turn) => actionsOf(await policy(turn), END_OF_TURN));
}

/** Whether a recorded request is the model router's (`:generateContent` asking for a complexity score). */
export function isRouterCall(url: string, body: GenerateRequest | undefined): boolean {
  return url.includes(":generateContent") && JSON.stringify(body?.generationConfig ?? {}).includes("complexity_score");
}

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 };

const GEMINI_API: ModelDialect<GenerateRequest, GeminiTurn, HostAction> = {
  isTurn: ({ method, path }) => method === "POST" && path.endsWith(":streamGenerateContent"),
  turn: (body, index, at) => new GeminiTurn(body, index, at),
  answerTurn(res, actions) {
    const send = startEventStream(res);
    const parts = actions.map((action) =>
      "text" in action
        ? { text: action.text }
        : { functionCall: { name: "backchannel" in action ? geminiTool(action.backchannel) : action.tool, args: action.input } },
    );
    send({ candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata: USAGE });
    res.end();
  },
  answerOther(res, { method, path, body }) {
    if (method === "POST" && path.endsWith(":countTokens")) return sendJson(res, 200, { totalTokens: USAGE.promptTokenCount });
    if (method === "POST" && path.endsWith(":generateContent")) {
      const text = isRouterCall(path, body)
        ? JSON.stringify({ complexity_reasoning: "A short, simple request.", complexity_score: 10 })
        : "Reader notes";
      return sendJson(res, 200, {
        candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
        usageMetadata: USAGE,
      });
    }
    sendJson(res, 404, { error: { code: 404, message: `no ${method} ${path} here`, status: "NOT_FOUND" } });
  },
  errorBody: (message) => ({ error: { code: 500, message, status: "INTERNAL" } }),
};

/** A function response's output as the model got it (`response.output`, else the response as JSON). */
function outputOf(part: Part): string {
  const response = part.functionResponse?.response ?? {};
  return typeof response.output === "string" ? response.output : JSON.stringify(response);
}

function partsText(parts: Part[]): string {
  return parts.map((part) => part.text ?? (part.functionResponse ? outputOf(part) : "")).join("\n");
}
