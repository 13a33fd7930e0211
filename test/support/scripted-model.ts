/**
 * The scripted model every host's tests talk to, whatever API the host speaks: a local
 * HTTP server that records each request with its arrival time, hands the main-loop
 * requests ("turns") to a test's policy, writes the policy's actions in the host's API,
 * and lets a test wait for a turn. A stand-in for the model only: the host that calls it
 * is real.
 *
 * This module owns the HTTP side (the server, the recording, the turns and the wait,
 * ids, the policy's failures, CORS, JSON and server-sent events); a dialect says which
 * requests are turns and how a reply looks in its API:
 * - test/support/claude-code/model-server.ts: Anthropic Messages (Claude Code);
 * - test/support/codex/model-server.ts: OpenAI Responses (Codex CLI);
 * - test/support/gemini/model-server.ts: the Gemini API (Gemini CLI);
 * - test/support/mcp-use/model-server.ts: OpenAI Chat Completions, called from a browser
 *   page, so with CORS (mcp-use's inspector).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { nextWake } from "./claude-code/next-wake.js";

/** What the model does in one reply: say a text, or call a tool (`id`: the call's id, made up when absent). */
export type Action = { text: string } | { tool: string; input: Record<string, unknown>; id?: string };

/**
 * A policy's answer: one action, several (tool calls in one reply), or `undefined` to end
 * the turn (each dialect says what it sends then).
 */
export type Reply<A = Action> = A | A[] | undefined;

/** One request the server received. */
export interface RecordedRequest<Body> {
  /** `performance.now()` when its body had arrived. */
  at: number;
  method: string;
  /** The path with its query, e.g. `/v1/messages?beta=true`. */
  url: string;
  /** The parsed JSON body (`undefined` when it had none or was not JSON). */
  body: Body | undefined;
  /** Whether it was a main-loop request, given to the policy. */
  main: boolean;
}

/** A request as the dialect sees it. */
export interface ModelRequest<Body> {
  method: string;
  /** The path without its query. */
  path: string;
  /** The body as received. */
  raw: string;
  /** The body parsed as JSON, `undefined` when it had none or was not JSON. */
  body: Body | undefined;
}

/** Makes an id unique to the server: `<prefix>_000001`, `<prefix>_000002`… */
export type NextId = (prefix: string) => string;

/** How one model API is spoken: `Body` a request's body, `T` a turn as its policy reads it, `A` the policy's actions. */
export interface ModelDialect<Body, T, A> {
  /** Answer the browser's CORS preflight, and allow any origin on every answer (for a model called from a page). Default false. */
  cors?: boolean;
  /** Whether `request` (whose body parsed as JSON) is a main-loop request; if so {@link turn} makes its turn. */
  isTurn(request: ModelRequest<Body>): boolean;
  /** The turn of a main-loop request: `index` its place among them (0 first), `at` its arrival (`performance.now()`). */
  turn(body: Body, index: number, at: number): T;
  /** Writes the reply to a turn: `actions`, what the policy decided. */
  answerTurn(res: ServerResponse, actions: A[], request: ModelRequest<Body> & { body: Body }, nextId: NextId): void;
  /** Answers any other request (side calls, model lists, token counts, unknown paths). */
  answerOther(res: ServerResponse, request: ModelRequest<Body>, nextId: NextId): void;
  /** The JSON body of an HTTP 500 that says `message`, in this API's error shape. */
  errorBody(message: string): unknown;
}

/** The running server. */
export interface ScriptedModel<Body, T> {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request so far, in order of arrival. */
  requests: RecordedRequest<Body>[];
  /** The main-loop requests so far. */
  turns(): T[];
  /**
   * Resolves with the first main-loop request (at or after `from`, an index into
   * {@link turns}) that `match` accepts.
   * @throws when `timeoutMs` (default 60,000) passes first.
   */
  waitForTurn(match?: (turn: T) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<T>;
  /** Errors thrown by the policy or while answering (each also answered with HTTP 500, in the API's error shape). */
  errors: Error[];
  close(): Promise<void>;
}

/** Headers that let a page of any origin call the model (a local stand-in only). */
const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-max-age": "600",
};

/**
 * Starts a scripted model speaking `dialect` on a free port of 127.0.0.1; `decide` gives
 * each turn's actions (`nextId` for the ids it makes up). A throw of `decide` is recorded
 * in `errors` and answered as "policy failed: …".
 */
export async function startScriptedModel<Body, T, A>(
  dialect: ModelDialect<Body, T, A>,
  decide: (turn: T, nextId: NextId) => A[] | Promise<A[]>,
): Promise<ScriptedModel<Body, T>> {
  const requests: RecordedRequest<Body>[] = [];
  const turns: T[] = [];
  const errors: Error[] = [];
  const waiters = new Set<() => void>();
  let ids = 0;
  const nextId: NextId = (prefix) => `${prefix}_${String(++ids).padStart(6, "0")}`;

  /** Answers `request`, which arrived at `at`; `main`: whether it is a turn. */
  const answer = async (request: ModelRequest<Body>, main: boolean, at: number, res: ServerResponse) => {
    if (dialect.cors && request.method === "OPTIONS") {
      res.writeHead(204);
      res.end();
      return;
    }
    if (!main || request.body === undefined) return dialect.answerOther(res, request, nextId);
    const { body } = request;
    const turn = dialect.turn(body, turns.length, at);
    turns.push(turn);
    for (const wake of waiters) wake();
    let actions: A[];
    try {
      actions = await decide(turn, nextId);
    } catch (error) {
      throw new Error(`policy failed: ${(error as Error).message}`);
    }
    dialect.answerTurn(res, actions, { ...request, body }, nextId);
  };

  const server = createServer((req, res) => {
    if (dialect.cors) for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Body | undefined;
      try {
        body = raw ? (JSON.parse(raw) as Body) : undefined;
      } catch {
        body = undefined;
      }
      const request: ModelRequest<Body> = { method: req.method ?? "", path: (req.url ?? "").split("?")[0] ?? "", raw, body };
      const main = body !== undefined && request.method !== "OPTIONS" && dialect.isTurn(request);
      const at = performance.now();
      requests.push({ at, method: request.method, url: req.url ?? "", body, main });
      answer(request, main, at, res).catch((error: Error) => {
        errors.push(error);
        if (!res.headersSent) sendJson(res, 500, dialect.errorBody(error.message));
        else res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    errors,
    turns: () => [...turns],
    async waitForTurn(match = () => true, { from = 0, timeoutMs = 60_000 } = {}) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const found = turns.slice(from).find(match);
        if (found) return found;
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no matching model request within ${timeoutMs} ms (${turns.length} main-loop requests so far)`);
        await nextWake(waiters, left);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The actions of a policy's `reply`; `undefined` (the end of the turn) becomes `ended`. */
export function actionsOf<A>(reply: Reply<A>, ended: A): A[] {
  return reply === undefined ? [ended] : Array.isArray(reply) ? reply : [reply];
}

/** Answers `value` as JSON with `status` (headers set before, such as CORS, are kept). */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

/**
 * Starts a server-sent event stream on `res`.
 * @returns a function that writes one event: `data` as JSON, named `event` when given.
 */
export function startEventStream(res: ServerResponse): (data: unknown, event?: string) => void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  return (data, event) => res.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
}

/** Characters per token: the usual estimate, for the `usage` the servers report. */
export const CHARS_PER_TOKEN = 4;

/** Estimated tokens of `text` ({@link CHARS_PER_TOKEN}). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
