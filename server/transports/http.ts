/**
 * backchannel over Streamable HTTP (docs/ARCHITECTURE.md, "The server" and "Remote
 * serving"). Every request gets a fresh `McpServer` from the factory: channel state lives
 * in the store, never in process memory, so no session has to be kept and any number of
 * processes serve the same channels.
 *
 * Without authentication it listens on loopback addresses only (127.0.0.1 by default).
 * With `--auth tokens` or `--auth oauth` every request to `/mcp` must carry a bearer
 * token (./bearer-gate.ts), and is served over its principal's own view of the store.
 * Either way, requests whose Host or Origin names neither this machine nor the public
 * URL are refused (DNS-rebinding protection): a web page on another site cannot reach it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve as resolvePath } from "node:path";
import { originValidation, toNodeHandler } from "@modelcontextprotocol/node";
import { type AuthInfo, createMcpHandler, localhostAllowedOrigins, type OAuthTokenVerifier } from "@modelcontextprotocol/server";
import { limitsFromEnv, MAX_REMOTE_WAIT_MS } from "../../core/limits.js";
import { resolveDataDir } from "../../core/paths.js";
import { createServer, type ServerOptions } from "../server.js";
import { WaitSlots } from "../tools/wait-slots.js";
import { startIdleSweep } from "../idle-sweep.js";
import { localBrowserHost } from "../browser-host.js";
import { bannerLocation, openStore, type StoreLocation, storeLocationFromEnv, watcherWhere } from "../../store/open.js";
import { VERSION } from "../../core/package.js";
import { warnOnStderr } from "../../core/warn.js";
import { type HttpAuth, INSECURE_NO_AUTH_WARNING } from "../auth/http-auth.js";
import { principalNamespace, principalOf } from "../auth/principal.js";
import { defaultTokenFile, readTokenFile } from "../auth/token-file.js";
import { jwtVerifier, staticTokenVerifier } from "../auth/verifiers.js";
import { BindAddressError, bindRefusal } from "./bind-address.js";
import { admit } from "./admission.js";
import { type Caller, Callers } from "./callers.js";
import { type ClientSettings, type ClientView, clientView } from "../client-view.js";
import { declarationOf, isInitialize, sessionIdFor, viewOfSessionId } from "./client-declaration.js";
import { type BearerGate, bearerGate } from "./bearer-gate.js";
import { isMetadataPath, protectedResourceMetadata, sendMetadata } from "./protected-resource.js";

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
 * The view of the client whose request is being served (../client-view.ts), for the
 * server factory, which the SDK calls with the request but not its body.
 */
const clientViews = new AsyncLocalStorage<ClientView>();

/**
 * What the client of a request can do: what its body declares (`initialize`, or the
 * envelope of 2026-07-28), else what its session id holds (a 2025 client after
 * `initialize`, ./client-declaration.ts), else unknown (everything).
 */
function requestClientView(parsedBody: unknown, sessionId: string | string[] | undefined, settings: ClientSettings): ClientView {
  const declared = declarationOf(parsedBody);
  if (declared) return clientView(declared, settings);
  return (typeof sessionId === "string" ? viewOfSessionId(sessionId) : undefined) ?? clientView(undefined, settings);
}

/** Options of {@link createMcpRequestListener}: the server's, who may call it, and how to read what clients declare. */
export interface McpListenerOptions extends Omit<ServerOptions, "client">, ClientSettings {
  /**
   * When set, every request must pass this gate (a bearer token), and is served over
   * the view of `store` that belongs to the token's principal. Default: no
   * authentication, the whole store (loopback only).
   */
  authenticate?: BearerGate;
  /** The server's public URL: its host is accepted in Host and Origin besides this machine's names. */
  publicUrl?: URL;
}

/**
 * A request listener that serves MCP for `options` (Streamable HTTP, stateless), after
 * checking that Host and Origin name this machine or the public URL (403 otherwise) and,
 * with `options.authenticate`, the bearer token (401/403). `readLocalFiles` defaults to
 * false here: over HTTP the caller need not be the user whose files the server can read.
 */
export function createMcpRequestListener(options: McpListenerOptions, onerror: (error: Error) => void = logError): RequestListener {
  const { authenticate, publicUrl, apps, wake, ...serverOptions } = options;
  const settings: ClientSettings = { apps, wake };
  const callers = new Callers(serverOptions.store);
  // Admission counts the waiting calls (./admission.ts): the tools' own count takes no cap here.
  const uncounted = new WaitSlots(Number.POSITIVE_INFINITY, "server");
  const callerOf = (authInfo: AuthInfo | undefined): Caller => callers.of(callerNamespace(authInfo, authenticate !== undefined));
  const handler = createMcpHandler(
    ({ authInfo }) => {
      const { store, waitingPolls } = callerOf(authInfo);
      const server = createServer({
        readLocalFiles: false,
        watchChannels: false,
        ...(publicUrl ? { watcherWhere: ["--url", publicUrl.href] } : {}),
        ...serverOptions,
        store,
        waitingPolls,
        waitSlots: uncounted,
        client: clientViews.getStore() ?? clientView(undefined, settings),
      });
      // A 2025-11-25 client's cancel comes in a request of its own, to this fresh instance: end the poll it names (see waiting-polls.ts).
      server.server.setNotificationHandler("notifications/cancelled", (notification) => {
        if (notification.params.requestId !== undefined) waitingPolls.cancel(notification.params.requestId);
      });
      return server;
    },
    { onerror },
  );
  const serve = toNodeHandler(handler, { onerror });
  const originIsAllowed = originValidation([...localhostAllowedOrigins(), ...(publicUrl ? [publicUrl.hostname] : [])]);
  return async (req, res) => {
    if (!hostIsAllowed(req, res, publicUrl) || !originIsAllowed(req, res)) return;
    sendStreamHeadersAtOnce(res);
    const auth = authenticate ? await authenticate(req, res) : undefined;
    if (authenticate && !auth) return;
    const admitted = await admit(req, res, callerOf(auth).slots);
    if (!admitted) return;
    const view = requestClientView(admitted.parsedBody, req.headers["mcp-session-id"], settings);
    // A 2025 client declares itself only here: its session id carries the view to its later requests.
    if (isInitialize(admitted.parsedBody)) res.setHeader("mcp-session-id", sessionIdFor(view));
    await clientViews.run(view, () => serve(Object.assign(req, auth ? { auth } : {}), res, admitted.parsedBody));
  };
}

/**
 * Makes `res` send its headers the moment they are written when it is an event stream
 * (how the SDK answers a POST). Node holds written headers until the first byte of the
 * body, and a waiting poll's first byte is its answer: the client would learn that its
 * request was taken only with the answer, and a host that records each HTTP exchange
 * once its headers come (MCP Inspector re-renders its whole page for each record) would
 * do that work on the answer's way to the app instead of while the poll waits.
 */
function sendStreamHeadersAtOnce(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (statusCode: number, ...rest: unknown[]) => ServerResponse;
  res.writeHead = ((statusCode: number, ...rest: unknown[]) => {
    writeHead(statusCode, ...rest);
    // The headers come last: writeHead(status, [message,] headers).
    const headers = rest.at(-1);
    if (typeof headers === "object" && headers !== null && isEventStream((headers as Record<string, unknown>)["content-type"])) res.flushHeaders();
    return res;
  }) as ServerResponse["writeHead"];
}

/** Whether a content-type header value names an event stream (`text/event-stream`, any parameters). */
function isEventStream(contentType: unknown): boolean {
  return typeof contentType === "string" && contentType.toLowerCase().startsWith("text/event-stream");
}

/**
 * Whose view of the store serves a request: with authentication, the namespace of its
 * principal (a request without one is an error, never the whole store); without, none.
 * @throws Error when authentication is on and `authInfo` names no principal.
 */
function callerNamespace(authInfo: AuthInfo | undefined, authenticated: boolean): string | undefined {
  if (!authenticated) return undefined;
  const principal = principalOf(authInfo);
  if (principal === undefined) throw new Error("an authenticated request reached the server without a principal");
  return principalNamespace(principal);
}

/**
 * Whether the request's Host header names this machine or the public URL's host (any
 * port); when not, answers 403 with a JSON-RPC error and returns false.
 */
function hostIsAllowed(req: IncomingMessage, res: ServerResponse, publicUrl: URL | undefined): boolean {
  const host = req.headers.host ?? "";
  // The SDK builds the request's URL from the Host header: one it cannot parse (a port
  // above 65535, an octet above 255) is the caller's mistake, not a server failure.
  if (!URL.canParse(`http://${host}/`)) {
    const message = `Host ${JSON.stringify(host.slice(0, 200))} is not a valid host[:port]`;
    res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message }, id: null }));
    return false;
  }
  if (LOCAL_HOST_HEADER.test(host)) return true;
  if (publicUrl && hostnameOf(host) === publicUrl.hostname) return true;
  const allowed = publicUrl ? `${publicUrl.hostname} (the public URL) or localhost` : "localhost, 127.0.0.1 or [::1], with an optional port";
  const message = `Host ${JSON.stringify(host.slice(0, 200))} is not accepted: backchannel serves requests for ${allowed}`;
  res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  return false;
}

/**
 * The host name of a Host header (`name[:port]` or `[v6][:port]`, RFC 9110 §7.2), lower
 * case, or `undefined` for anything else (userinfo, a path, spaces).
 */
function hostnameOf(host: string): string | undefined {
  const match = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i.exec(host);
  return match?.[1]?.toLowerCase();
}

/** Options of {@link listen}. */
export interface ListenOptions {
  /** Address to bind. Default 127.0.0.1. */
  host?: string;
  /** Port to bind; 0 picks a free one. Default 0. */
  port?: number;
}

/** Options of {@link runHttpServer}. */
export interface HttpServerOptions extends ListenOptions, ClientSettings {
  /** The store. Default: the one the environment chooses (`$BACKCHANNEL_STORE`, else the data directory). */
  location?: StoreLocation;
  /** How callers are authenticated (../auth/http-auth.ts). Default: not at all, which only a loopback host allows. */
  auth?: HttpAuth;
  /** The server's public URL (`--public-url`). Default: the URL it listens on. */
  publicUrl?: URL;
}

/**
 * How many connections the kernel may hold for the server before it accepts them
 * (capped by the system's `net.core.somaxconn`, 4096 on current Linux). Node's default,
 * 511, overflowed when thousands of long-polls came at once on a busy machine, and the
 * kernel reset connections it had already completed (ECONNRESET for 3 of 7 floods of
 * 2,000 at load 6–9; none of 5 with this backlog).
 */
const LISTEN_BACKLOG = 4096;

/** Starts `server` on `options` and resolves with the URL it serves (e.g. `http://127.0.0.1:5173/`). */
export function listen(server: Server, options: ListenOptions = {}): Promise<URL> {
  const host = options.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: options.port ?? 0, host, backlog: LISTEN_BACKLOG }, () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve(new URL(`http://${shownHost}:${address.port}/`));
    });
  });
}

/**
 * Runs `backchannel serve --http`: MCP at `/mcp` over the store of `options.location`
 * (by default the file store in the data directory), with the authentication of
 * `options.auth`, until the process ends. Prints the endpoint's URL on stderr, and why
 * `--insecure-no-auth` is dangerous when it is given.
 * @throws BindAddressError for a host that is not a loopback address without
 *   authentication (see ./bind-address.ts); TokenFileError for a token file that cannot
 *   be used; InvalidStoreUrlError; Error when the port is taken or a limit variable is malformed.
 */
export async function runHttpServer(options: HttpServerOptions = {}): Promise<void> {
  const auth = options.auth ?? { mode: "none", insecure: false };
  const refusal = bindRefusal(options.host ?? "127.0.0.1", auth.mode !== "none" || auth.insecure);
  if (refusal) throw new BindAddressError(refusal);
  if (auth.mode === "none" && auth.insecure) process.stderr.write(`backchannel: ${INSECURE_NO_AUTH_WARNING}\n`);
  const location = options.location ?? storeLocationFromEnv();
  const tokenFile =
    auth.mode === "tokens"
      ? resolvePath(auth.tokenFile ?? defaultTokenFile(location.kind === "file" ? location.dataDir : resolveDataDir()))
      : undefined;
  // Refuse a missing or unsafe token file now, not at the first request.
  if (tokenFile !== undefined) readTokenFile(tokenFile);
  const { store, limits } = await openStore(location, { limits: limitsFromEnv() });
  startIdleSweep(store);
  let route: RequestListener | undefined;
  const server = createHttpServer((req, res) => {
    if (!route) {
      res.writeHead(503, { "retry-after": "1" }).end();
      return;
    }
    route(req, res).catch(logError);
  });
  const url = await listen(server, options);
  const endpoint = new URL(MCP_PATH, url);
  const resource = options.publicUrl ?? endpoint;
  const verifier = verifierOf(auth, tokenFile, resource);
  const authenticate = verifier && bearerGate({ verifier, resource, onerror: logError });
  const mcp = createMcpRequestListener({
    store,
    // Reached at a public URL, callers come through remote connectors that give up near
    // 60 s: no single wait may come close, so the schemas advertise the shorter bound.
    maxAgentWaitMs: options.publicUrl ? Math.min(limits.maxAgentWaitMs, MAX_REMOTE_WAIT_MS) : limits.maxAgentWaitMs,
    maxUiWaitMs: options.publicUrl ? Math.min(limits.maxUiWaitMs, MAX_REMOTE_WAIT_MS) : limits.maxUiWaitMs,
    authenticate,
    publicUrl: options.publicUrl,
    watcherWhere: watcherWhereFor(location, endpoint, options.publicUrl, authenticate !== undefined),
    apps: options.apps,
    wake: options.wake,
    // Only a server on the person's own machine (loopback, no accounts) can show them an app in their browser.
    ...(authenticate === undefined && options.publicUrl === undefined ? { browser: localBrowserHost(location) } : {}),
  });
  const metadata = protectedResourceMetadata(resource, auth);
  route = async (req, res) => {
    // Only a path (RFC 9112 origin-form): an absolute URL as the target names another server.
    if (!req.url?.startsWith("/")) {
      res.writeHead(400, { "content-type": "text/plain" }).end("the request target must be a path, such as /mcp\n");
      return;
    }
    const path = new URL(req.url, "http://localhost").pathname;
    if (path === MCP_PATH) return mcp(req, res);
    if (authenticate && isMetadataPath(path, resource, MCP_PATH)) return sendMetadata(req.method, res, metadata);
    res.writeHead(404, { "content-type": "text/plain" }).end(`backchannel serves MCP at ${MCP_PATH} only\n`);
  };
  process.stderr.write(
    `backchannel ${VERSION}: MCP server at ${endpoint}, ${bannerLocation(location)}, ${describeAuth(auth, tokenFile, resource)}\n`,
  );
}

/**
 * How `watch_command` names this server's store: `--url` when the agent watches through
 * the server (at its public URL; or at its own endpoint when callers authenticate, since
 * each principal's channels are its own and only the server knows whose a token is), else
 * the store itself, as the local watcher would not find it from the agent's shell.
 */
function watcherWhereFor(location: StoreLocation, endpoint: URL, publicUrl: URL | undefined, authenticated: boolean): readonly string[] {
  if (publicUrl) return ["--url", publicUrl.href];
  if (authenticated) return ["--url", endpoint.href];
  const { where, warning } = watcherWhere(location);
  if (warning) process.stderr.write(`backchannel: ${warning}\n`);
  return where;
}

/** The verifier of `auth`'s tokens, for `resource`; `undefined` without authentication. */
function verifierOf(auth: HttpAuth, tokenFile: string | undefined, resource: URL): OAuthTokenVerifier | undefined {
  if (auth.mode === "tokens" && tokenFile !== undefined) return staticTokenVerifier(tokenFile, resource);
  if (auth.mode === "oauth") return jwtVerifier({ issuer: auth.issuer, jwksUrl: auth.jwksUrl, resource });
  return undefined;
}

/** How callers are authenticated, for the start-up banner. */
function describeAuth(auth: HttpAuth, tokenFile: string | undefined, resource: URL): string {
  if (auth.mode === "tokens") return `bearer tokens of ${tokenFile} for ${resource}`;
  if (auth.mode === "oauth") return `OAuth access tokens of ${auth.issuer} for ${resource}`;
  return auth.insecure ? "NO AUTHENTICATION (--insecure-no-auth)" : "no authentication (loopback only)";
}

function logError(error: Error): void {
  warnOnStderr(error.message);
}
