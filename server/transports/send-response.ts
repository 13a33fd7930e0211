/**
 * Writing a web-standard `Response` (what the SDK's HTTP helpers build) to a Node
 * `ServerResponse`.
 */
import type { ServerResponse } from "node:http";

/** Writes `response`'s status, headers and body to `res`, and ends it. */
export async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}
