/**
 * backchannel over Streamable HTTP (docs/ARCHITECTURE.md, "The server"). Every request gets a fresh `McpServer`
 * from the factory: channel state lives in the store, never in process memory, so no
 * session has to be kept and any number of processes serve the same channels.
 *
 * It has no authentication, so it listens on loopback addresses only (127.0.0.1 by
 * default), and refuses requests whose Host or Origin is not a localhost name
 * (DNS-rebinding protection): a web page on another site cannot reach it.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { localhostOriginValidation, toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { limitsFromEnv } from "../../core/limits.js";
import { createServer, type ServerOptions } from "../server.js";
import { WaitingPolls } from "../tools/waiting-polls.js";
import { startIdleSweep } from "../idle-sweep.js";
import { bannerLocation, openStore, type StoreLocation, storeLocationFromEnv } from "../../store/open.js";
import { VERSION } from "../../core/package.js";
import { warnOnStderr } from "../../core/warn.js";
import { BindAddressError, bindRefusal } from "./bind-address.js";

/** The path of the MCP endpoint. */
export const MCP_PATH = "/mcp";

/** A Node request listener that answers `(req, res)`; resolves when the response is under way. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * A Host header that names this machine: `localhost`, a 127.x.x.x address or `[::1]`,
 * with an optional port, and nothing else. A Host is only `host[:port]` (RFC 9110
 * §7.2): userinfo such as `evil.com@localhost`, which a URL parser would read as
 * localhost, is refused here before anything builds a URL from it.
 */
const LOCAL_HOST_HEADER = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/**
 * A request listener that serves MCP for `options` (Streamable HTTP, stateless), after
 * checking that Host and Origin name localhost (403 otherwise). `readLocalFiles`
 * defaults to false here: over HTTP the caller need not be the user whose files the
 * server can read.
 */
export function createMcpRequestListener(options: ServerOptions, onerror: (error: Error) => void = logError): RequestListener {
  const waitingPolls = new WaitingPolls();
  const handler = createMcpHandler(
    () => {
      const server = createServer({ readLocalFiles: false, watchChannels: false, ...options, waitingPolls });
      // A 2025-11-25 client's cancel comes in a request of its own, to this fresh instance: end the poll it names (see waiting-polls.ts).
      server.server.setNotificationHandler("notifications/cancelled", (notification) => {
        if (notification.params.requestId !== undefined) waitingPolls.cancel(notification.params.requestId);
      });
      return server;
    },
    { onerror },
  );
  const serve = toNodeHandler(handler, { onerror });
  const originIsLocal = localhostOriginValidation();
  return async (req, res) => {
    if (!hostIsLocal(req, res) || !originIsLocal(req, res)) return;
    await serve(req, res);
  };
}

/** Whether the request's Host header names this machine; when not, answers 403 with a JSON-RPC error and returns false. */
function hostIsLocal(req: IncomingMessage, res: ServerResponse): boolean {
  const host = req.headers.host ?? "";
  if (LOCAL_HOST_HEADER.test(host)) return true;
  const message = `Host ${JSON.stringify(host)} is not localhost: backchannel serves this machine only (Host localhost, 127.0.0.1 or [::1], with an optional port)`;
  res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  return false;
}

/** Options of {@link listen}. */
export interface ListenOptions {
  /** Address to bind. Default 127.0.0.1. */
  host?: string;
  /** Port to bind; 0 picks a free one. Default 0. */
  port?: number;
}

/** Options of {@link runHttpServer}. */
export interface HttpServerOptions extends ListenOptions {
  /** The store. Default: the one the environment chooses (`$BACKCHANNEL_STORE`, else the data directory). */
  location?: StoreLocation;
}

/** Starts `server` on `options` and resolves with the URL it serves (e.g. `http://127.0.0.1:5173/`). */
export function listen(server: Server, options: ListenOptions = {}): Promise<URL> {
  const host = options.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve(new URL(`http://${shownHost}:${address.port}/`));
    });
  });
}

/**
 * Runs `backchannel serve --http`: MCP at `/mcp` over the store of `options.location`
 * (by default the file store in the data directory), until the process ends. Prints the
 * endpoint's URL on stderr.
 * @throws BindAddressError for a host that is not a loopback address (see ./bind-address.ts);
 *   InvalidStoreUrlError; Error when the port is taken or a limit variable is malformed.
 */
export async function runHttpServer(options: HttpServerOptions = {}): Promise<void> {
  const refusal = bindRefusal(options.host ?? "127.0.0.1");
  if (refusal) throw new BindAddressError(refusal);
  const location = options.location ?? storeLocationFromEnv();
  const { store, limits } = await openStore(location, { limits: limitsFromEnv() });
  startIdleSweep(store);
  const mcp = createMcpRequestListener({ store, maxAgentWaitMs: limits.maxAgentWaitMs, maxUiWaitMs: limits.maxUiWaitMs });
  const server = createHttpServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== MCP_PATH) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`backchannel serves MCP at ${MCP_PATH} only\n`);
      return;
    }
    mcp(req, res).catch(logError);
  });
  const url = await listen(server, options);
  process.stderr.write(`backchannel ${VERSION}: MCP server at ${new URL(MCP_PATH, url)}, ${bannerLocation(location)}\n`);
}

function logError(error: Error): void {
  warnOnStderr(error.message);
}
