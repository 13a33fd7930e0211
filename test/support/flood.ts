/**
 * One principal flooding a `serve --http` with polls of a full queue whose answers it
 * never reads, while another works beside it: the requests, written without a client
 * library (as many at once as a flood wants, one socket each), for
 * test/active-calls.test.ts and the bench's flood suite (bench/suites/flood.ts).
 */
import { type IncomingMessage, request } from "node:http";

/** One JSON-RPC request of `tools/call`. */
export function toolCall(id: number, name: string, args: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

/** The poll the flood repeats: every message of the full queue, acknowledging none. */
export function pollAll(id: number, channel: string) {
  return toolCall(id, "poll_ui_messages", { channel_id: channel, after: 0 });
}

/** The headers of a POST to the MCP endpoint as `token`, speaking `protocol`. */
function headers(token: string, protocol: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": protocol,
  };
}

/** A POST whose answer is read only when it is a JSON answer (a refusal); an event stream (an answer being sent) is left unread. */
export interface Unread {
  /** Resolves with the answer's content type once its headers came. */
  answered: Promise<string>;
  /** The JSON answer's body, once read whole (`undefined` for an event stream, or before). */
  body(): string | undefined;
  end(): void;
}

/** POSTs `payload` (one request or a batch) on a socket of its own, never reading an event stream's answer. */
export function postUnread(url: URL, token: string, payload: unknown, protocol = "2025-03-26"): Unread {
  let body: string | undefined;
  const req = request(url, { method: "POST", agent: false, headers: headers(token, protocol) });
  const answered = new Promise<string>((resolve, reject) => {
    req.on("response", (res: IncomingMessage) => {
      const type = res.headers["content-type"] ?? "";
      if (type.startsWith("application/json")) {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => (body = text));
      }
      resolve(type);
    });
    req.on("error", reject);
  });
  answered.catch(() => undefined);
  req.end(JSON.stringify(payload));
  return { answered, body: () => body, end: () => req.destroy() };
}

/** POSTs `payload` on a connection of its own and reads the whole answer; resolves with it and how long it took, in ms. */
export function postRead(url: URL, token: string, payload: unknown): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent: false, headers: headers(token, "2025-11-25") }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ text, ms: performance.now() - started }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(payload));
  });
}

/**
 * Fills the app's queue of `channel` to its byte limit with messages of quotes (each
 * is escaped again in a poll's text, the most an answer can grow).
 * @returns how many messages it holds.
 * @throws Error when a send fails for another reason than a full queue.
 */
export async function fillWithQuotes(url: URL, token: string, channel: string): Promise<number> {
  const quotes = '"'.repeat(30_000);
  for (let sent = 0; ; sent++) {
    const { text } = await postRead(url, token, toolCall(1, "notify_ui", { channel_id: channel, event: "e", data: { text: quotes } }));
    if (/QUEUE_FULL/.test(text)) return sent;
    if (!/"seq":\d+/.test(text)) throw new Error(`a send to fill ${channel} failed: ${text.slice(0, 300)}`);
  }
}
