/**
 * Refusing a waiting call before a server is built for it (docs/ARCHITECTURE.md, "Limits
 * per principal"). Over HTTP every request gets a fresh `McpServer` (about 60 KiB, and as
 * much again for its transport); a principal flooding the server with waits past its cap
 * would make it build and drop one per refused call, thousands at once, and the garbage
 * grew the server by hundreds of MiB before the collector caught up.
 *
 * So while a caller has no free slot, its requests are read here first: a `tools/call`
 * that would wait is answered at once with the same `WAIT_LIMIT` result the tool gives,
 * and anything else goes on to the SDK with the body already parsed. While a slot is free
 * nothing is read here: the tool's own check (../tools/wait-slots.ts) stays the rule, and
 * this only makes its refusal cheap.
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

/** What the SDK handler is to be given for a request not refused here. */
export interface NotRefused {
  /** The request's JSON body when it was read here (the SDK must not read the stream again); else undefined. */
  parsedBody?: unknown;
}

/**
 * Answers `req` with `WAIT_LIMIT` when it is a call that would wait and `slots` has none
 * free; a body larger than the SDK's limit (413) or not JSON (400) is answered too, as
 * the SDK would.
 * @returns `undefined` when it answered; else what to give the SDK handler.
 */
export async function refuseWaitWithoutSlot(req: IncomingMessage, res: ServerResponse, slots: WaitSlots): Promise<NotRefused | undefined> {
  const refusal = slots.refusal();
  if (refusal === undefined || req.method !== "POST") return {};
  const text = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
  if (text === undefined) {
    sendJson(res, 413, jsonRpcError(-32000, `the request body is larger than ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`, null));
    return undefined;
  }
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(text);
  } catch {
    sendJson(res, 400, jsonRpcError(-32700, "Parse error: the request body is not valid JSON", null));
    return undefined;
  }
  const call = toolCall.safeParse(parsedBody);
  if (!call.success || !callMayWait(call.data.params.name, call.data.params.arguments?.wait_ms)) return { parsedBody };
  sendJson(res, 200, { jsonrpc: "2.0", id: call.data.id, result: toolError(refusal) });
  return undefined;
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
