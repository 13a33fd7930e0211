/**
 * Refusing a waiting call before a server is built for it (docs/ARCHITECTURE.md, "Limits
 * per principal"). Over HTTP every request gets a fresh `McpServer` (about 60 KiB, and as
 * much again for its transport); a principal flooding the server with waits past its cap
 * would make it build and drop one per refused call, thousands at once, and the garbage
 * grew the server by hundreds of MiB before the collector caught up.
 *
 * So every request's body is read and parsed here first ({@link readRequestJson}, which
 * the transport also needs to learn what the client declares), and while a caller has no
 * free slot a `tools/call` that would wait is answered at once with the same
 * `WAIT_LIMIT` result the tool gives; anything else goes on to the SDK with the body
 * already parsed. While a slot is free the tool's own check (../tools/wait-slots.ts)
 * stays the rule: this only makes its refusal cheap.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { DEFAULT_MAX_REQUEST_BODY_SIZE } from "@modelcontextprotocol/server";
import { z } from "zod";
import { toolError } from "../tools/results.js";
import { callMayWait, type WaitSlots } from "../tools/wait-slots.js";

/** The one shape refused here: a single `tools/call` request (a batch or a notification goes on). */
const toolCall = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.literal("tools/call"),
  params: z.object({ name: z.string(), arguments: z.object({ wait_ms: z.unknown() }).partial().optional() }),
});

/** A request's body as read here, for the SDK handler (which must not read the stream again). */
export interface ReadBody {
  /** The request's JSON body; undefined for a request without one (not a POST). */
  parsedBody?: unknown;
}

/**
 * Reads and parses the JSON body of a POST; a body larger than the SDK's limit (413) or
 * not JSON (400) is answered, as the SDK would.
 * @returns `undefined` when it answered; else the body for the SDK handler.
 */
export async function readRequestJson(req: IncomingMessage, res: ServerResponse): Promise<ReadBody | undefined> {
  if (req.method !== "POST") return {};
  const text = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
  if (text === undefined) {
    sendJson(res, 413, jsonRpcError(-32000, `the request body is larger than ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`, null));
    return undefined;
  }
  try {
    return { parsedBody: JSON.parse(text) };
  } catch {
    sendJson(res, 400, jsonRpcError(-32700, "Parse error: the request body is not valid JSON", null));
    return undefined;
  }
}

/**
 * Answers with `WAIT_LIMIT` when `parsedBody` is a call that would wait and `slots` has
 * none free.
 * @returns true when it answered.
 */
export function refuseWaitWithoutSlot(parsedBody: unknown, res: ServerResponse, slots: WaitSlots): boolean {
  const refusal = slots.refusal();
  if (refusal === undefined) return false;
  const call = toolCall.safeParse(parsedBody);
  if (!call.success || !callMayWait(call.data.params.name, call.data.params.arguments?.wait_ms)) return false;
  sendJson(res, 200, { jsonrpc: "2.0", id: call.data.id, result: toolError(refusal) });
  return true;
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

function jsonRpcError(code: number, message: string, id: null): Record<string, unknown> {
  return { jsonrpc: "2.0", error: { code, message }, id };
}

/** Answers with `body` as JSON and closes the connection: a caller at its cap should not keep sockets open. */
function sendJson(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { "content-type": "application/json", connection: "close" }).end(JSON.stringify(body));
}
