/**
 * Admission of requests to `/mcp` (docs/ARCHITECTURE.md, "Limits per principal"). Before
 * a server instance is built for a POST, its body is read here and every JSON-RPC
 * request in it takes a slot of its caller (../tools/wait-slots.ts): a call that may
 * wait one of the caller's waiting slots, any other request one of its active slots (a
 * batch takes one per request it holds, all or none). The slots are held until the
 * request's answer is sent: an answer waits in memory until the client reads it, so a
 * slot that came back when the tool returned would let unread answers pile up.
 *
 * An admitted request is served on a later turn of the event loop than the one it was
 * read in, so that a burst is admitted or refused whole before any of it does work.
 * A request whose slots are not all free is answered here at once, each request in it
 * with the cap's error (a tool call as the tool's own error result), and nothing is done:
 * a flood past a cap costs a parsed body per request instead of a server instance (about
 * 120 KiB with its transport), the work and the answer.
 *
 * Over HTTP this is where waiting calls are counted: the tools' own count
 * (`createServer`'s `waitSlots`) is given no cap here, or it would count them twice.
 */
import { finished } from "node:stream";
import type { IncomingMessage, ServerResponse } from "node:http";
import { DEFAULT_MAX_REQUEST_BODY_SIZE, isJsonContentType } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { CallerError } from "../../core/errors.js";
import { toolError } from "../tools/results.js";
import { type ActiveSlots, callMayWait, type WaitSlots } from "../tools/wait-slots.js";

/** The slots of one caller: a principal's (inside the process's), or the process's. */
export interface CallerSlots {
  waiting: WaitSlots;
  active: ActiveSlots;
}

/** What the SDK handler is to be given for an admitted request. */
export interface Admitted {
  /** The request's JSON body when it was read here (the SDK must not read the stream again); else undefined. */
  parsedBody?: unknown;
}

/** A JSON-RPC request (a message with an id and a method: one that is answered), as far as admission reads it. */
const jsonRpcRequest = z.object({
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z.unknown().optional(),
});
type JsonRpcRequest = z.infer<typeof jsonRpcRequest>;

/** The part of a `tools/call` that says whether it may wait. */
const toolCallParams = z.object({ name: z.string(), arguments: z.object({ wait_ms: z.unknown() }).partial().optional() });

/**
 * Admits `req` with `slots`: takes a slot for each request its body holds, given back
 * when `res` is finished or closed. A body that is not JSON (400), larger than the SDK's
 * limit (413), or whose slots are not free (each request answered with the cap's error)
 * is answered here. A request other than a JSON POST is admitted as it is (the SDK
 * answers it, and it does no work).
 * @returns `undefined` when it answered; else what to give the SDK handler.
 */
export async function admit(req: IncomingMessage, res: ServerResponse, slots: CallerSlots): Promise<Admitted | undefined> {
  if (req.method !== "POST" || !isJsonContentType(req.headers["content-type"] ?? null)) return {};
  const text = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
  if (text === undefined) {
    sendJson(res, 413, jsonRpcError(null, -32000, `the request body is larger than ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`));
    return undefined;
  }
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(text);
  } catch {
    sendJson(res, 400, jsonRpcError(null, -32700, "Parse error: the request body is not valid JSON"));
    return undefined;
  }
  const requests = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]).flatMap((message) => {
    const parsed = jsonRpcRequest.safeParse(message);
    return parsed.success ? [parsed.data] : [];
  });
  const waiting = requests.filter(mayWait).length;
  const active = requests.length - waiting;
  const refusal = (waiting > 0 ? slots.waiting.refusal(waiting) : undefined) ?? (active > 0 ? slots.active.refusal(active) : undefined);
  if (refusal) {
    const answers = requests.map((request) => refusalOf(request, refusal));
    sendJson(res, 200, Array.isArray(parsedBody) ? answers : (answers[0] ?? {}));
    return undefined;
  }
  const giveBack = [slots.waiting.take(waiting), slots.active.take(active)];
  finished(res, () => {
    for (const slot of giveBack) slot();
  });
  // Served on a later turn of the event loop: requests that came together are all
  // admitted (or refused, cheaply) before any of them does its work.
  await new Promise((resolve) => setImmediate(resolve));
  return { parsedBody };
}

/** Whether `request` is a tool call that may wait. */
function mayWait(request: JsonRpcRequest): boolean {
  if (request.method !== "tools/call") return false;
  const params = toolCallParams.safeParse(request.params);
  return params.success && callMayWait(params.data.name, params.data.arguments?.wait_ms);
}

/** The answer to `request` refused with `refusal`: a tool call gets the tool's error result, anything else a JSON-RPC error carrying the code. */
function refusalOf(request: JsonRpcRequest, refusal: CallerError): Record<string, unknown> {
  if (request.method === "tools/call") return { jsonrpc: "2.0", id: request.id, result: toolError(refusal) };
  return jsonRpcError(request.id, -32000, refusal.message, { code: refusal.code });
}

/** The body of `req` as UTF-8 text, or `undefined` once it passes `maxBytes` (the rest is not read). */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  if (Number(req.headers["content-length"]) > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function jsonRpcError(id: string | number | null, code: number, message: string, data?: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: "2.0", error: { code, message, ...(data ? { data } : {}) }, id };
}

/** Answers with `body` as JSON and closes the connection: a caller at its cap should not keep sockets open. */
function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", connection: "close" }).end(JSON.stringify(body));
}
