/**
 * What every scripted model has in common, whichever host's API it speaks (Claude Code's
 * Messages API, Codex's Responses API, Gemini CLI's Gemini API): a local HTTP server on a
 * free port of 127.0.0.1 that records every request with its arrival time, hands the
 * main-loop requests (the model's turns) to a policy, and lets a test wait for a turn.
 * The wire format (which requests are turns, how a reply is written) is the host's
 * module's: claude-code/model-server.ts, codex/model-server.ts, gemini/model-server.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { nextWake } from "./claude-code/next-wake.js";

/** One request the server received. */
export interface RecordedRequest<Body> {
  /** `performance.now()` when its body had arrived. */
  at: number;
  method: string;
  /** The path with its query. */
  url: string;
  /** The parsed JSON body (`undefined` when it had none or was not JSON). */
  body: Body | undefined;
  /** Whether it was a main-loop request, given to the policy. */
  main: boolean;
}

/** A host's API as the scripted model speaks it. */
export interface WireFormat<Body, Turn, Action> {
  /** Whether a request is one of the model's turns (given to the policy). */
  isMain(method: string, path: string, body: Body | undefined): boolean;
  /** The turn of a main-loop request. */
  turn(body: Body, index: number, at: number): Turn;
  /** Writes the reply to a main-loop request: the policy's actions. `nextId` makes ids unique to the server. */
  reply(res: ServerResponse, body: Body, actions: Action[], nextId: (prefix: string) => string): void;
  /** Answers any other request (side calls, unknown paths); `raw` is its body as text. */
  other(res: ServerResponse, method: string, path: string, body: Body | undefined, raw: string): void;
  /** Answers a main-loop request whose policy threw. */
  failed(res: ServerResponse, message: string): void;
}

/** The running server. */
export interface ScriptedModel<Body, Turn> {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request so far, in order of arrival. */
  requests: RecordedRequest<Body>[];
  /** The main-loop requests so far. */
  turns(): Turn[];
  /**
   * Resolves with the first turn (at or after `from`, an index into {@link turns}) that
   * `match` accepts.
   * @throws when `timeoutMs` (default 60,000) passes first.
   */
  waitForTurn(match?: (turn: Turn) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<Turn>;
  /** Errors thrown by the policy (each also answered as a failure of the API). */
  errors: Error[];
  close(): Promise<void>;
}

/**
 * Starts a scripted model speaking `format`; `decide` is asked for each turn's actions.
 * A request whose body is not JSON is recorded with no body.
 */
export async function startScriptedModel<Body, Turn, Action>(
  format: WireFormat<Body, Turn, Action>,
  decide: (turn: Turn) => Action[] | Promise<Action[]>,
): Promise<ScriptedModel<Body, Turn>> {
  const requests: RecordedRequest<Body>[] = [];
  const turns: Turn[] = [];
  const errors: Error[] = [];
  const waiters = new Set<() => void>();
  let ids = 0;
  const nextId = (prefix: string) => `${prefix}_${String(++ids).padStart(6, "0")}`;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: Body | undefined;
    try {
      body = raw ? (JSON.parse(raw) as Body) : undefined;
    } catch {
      body = undefined;
    }
    const method = req.method ?? "";
    const path = (req.url ?? "").split("?")[0]!;
    const main = body !== undefined && format.isMain(method, path, body);
    const at = performance.now();
    requests.push({ at, method, url: req.url ?? "", body, main });
    if (!main) return format.other(res, method, path, body, raw);
    const turn = format.turn(body!, turns.length, at);
    turns.push(turn);
    for (const wake of waiters) wake();
    let actions: Action[];
    try {
      actions = await decide(turn);
    } catch (error) {
      errors.push(error as Error);
      return format.failed(res, `policy failed: ${(error as Error).message}`);
    }
    format.reply(res, body!, actions, nextId);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      errors.push(error);
      if (!res.headersSent) format.failed(res, error.message);
      else res.end();
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

/** Answers `res` with `value` as JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

/** Starts an SSE response. */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
}
