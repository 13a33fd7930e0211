/**
 * backchannel over stdio: stdout carries protocol only; everything for people goes to stderr.
 *
 * stdin is read by ./line-reader.ts, not by the SDK's transport directly: a message over
 * {@link MAX_STDIO_MESSAGE_BYTES} is answered with an error and the server goes on (the
 * SDK's reader would close the connection). The SDK's transport reads the lines that
 * pass, one whole line per chunk.
 */
import { PassThrough } from "node:stream";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { limitsFromEnv } from "../../core/limits.js";
import { createServer } from "../server.js";
import { sessionKey } from "../../core/session-key.js";
import { startIdleSweep } from "../idle-sweep.js";
import { bannerLocation, openStore, type StoreLocation, storeLocationFromEnv, watcherWhere } from "../../store/open.js";
import { VERSION } from "../../core/package.js";
import { type Warn, warnOnStderr } from "../../core/warn.js";
import { LineReader } from "./line-reader.js";
import type { RequestId } from "./request-id.js";
import { type ClientSettings, clientView, type DeclaredClient } from "../client-view.js";
import { declarationOf } from "./client-declaration.js";
import { localBrowserHost } from "../browser-host.js";

/** Largest message read from stdin: 10 MiB, the SDK's own limit, far above any call within the store's limits. */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024;

/** JSON-RPC's "Invalid Request", for a request too large to read. */
const INVALID_REQUEST = -32600;

const NEWLINE = Buffer.from("\n");

/** Options of {@link runStdioServer}. */
export interface StdioServerOptions extends ClientSettings {
  /** Push questions to Claude Code as channel notifications (see ../awareness/claude-channel.ts). Default false. */
  claudeChannel?: boolean;
  /** The store. Default: the one the environment chooses (`$BACKCHANNEL_STORE`, else the data directory). */
  location?: StoreLocation;
}

/**
 * Serves MCP on this process's stdin/stdout until stdin closes, over the store of
 * `options.location` (by default the file store in the data directory, `$BACKCHANNEL_HOME`
 * or the per-user default). Prints a one-line banner on stderr. When stdin closes, the
 * store is closed too, so that a Redis connection does not keep the process alive.
 * @throws Error when a limit variable in the environment is malformed; InvalidStoreUrlError.
 */
export async function runStdioServer(options: StdioServerOptions = {}): Promise<void> {
  const location = options.location ?? storeLocationFromEnv();
  const opened = await openStore(location, { limits: limitsFromEnv() });
  const { store, limits } = opened;
  // Computed once: every connection of this process serves the same host session.
  const key = sessionKey();
  startIdleSweep(store);
  // The agent's shell does not have this process's environment: the watcher command names the store.
  const { where, warning } = watcherWhere(location);
  if (warning) warnOnStderr(warning);
  const serverOptions = {
    watcherWhere: where,
    store,
    maxAgentWaitMs: limits.maxAgentWaitMs,
    maxUiWaitMs: limits.maxUiWaitMs,
    claudeChannel: options.claudeChannel,
    sessionKey: key,
    // A client that shows no apps gets a link to the reader in the person's browser, on this machine.
    browser: localBrowserHost(location),
  };
  // The client declares itself in its first request (initialize, or the envelope of
  // server/discover); the SDK builds the connection's server when that request is read.
  let declared: DeclaredClient | undefined;
  const settings: ClientSettings = { apps: options.apps, wake: options.wake };
  const notice = (line: Buffer) => {
    if (declared === undefined) declared = declarationOf(parseJson(line));
  };
  serveStdio(() => createServer({ ...serverOptions, client: clientView(declared, settings) }), {
    transport: limitedStdioTransport(warnOnStderr, notice),
    onerror: (error) => warnOnStderr(error.message),
  });
  process.stdin.once("end", () => void opened.close());
  const push = options.claudeChannel ? ", pushing to Claude Code channels" : "";
  process.stderr.write(`backchannel ${VERSION}: MCP server on stdio, ${bannerLocation(location)}, session ${key}${push}\n`);
}

/**
 * The SDK's stdio transport on this process's stdout, fed from stdin through a
 * {@link LineReader}: lines up to {@link MAX_STDIO_MESSAGE_BYTES} pass, each shown to
 * `notice` before the SDK reads it; a longer request is answered with an Invalid
 * Request error naming the limit (when its id could be found) and reported through `warn`.
 */
function limitedStdioTransport(warn: Warn, notice: (line: Buffer) => void): StdioServerTransport {
  const lines = new PassThrough();
  // The SDK's buffer then holds one line at a time; its limit is only a backstop.
  const transport = new StdioServerTransport(lines, process.stdout, { maxBufferSize: 2 * (MAX_STDIO_MESSAGE_BYTES + 1) });
  const refuse = (bytes: number, id: RequestId | undefined) => {
    warn(`a request of ${bytes} bytes refused: more than the ${MAX_STDIO_MESSAGE_BYTES} bytes read from stdio in one message`);
    if (id === undefined) return;
    const message =
      `the request is ${bytes} bytes, more than the 10 MiB (${MAX_STDIO_MESSAGE_BYTES} bytes) that backchannel reads from stdio in one message; ` +
      "send less: a long document as a local file (open_reader's path), or in parts";
    transport.send({ jsonrpc: "2.0", id, error: { code: INVALID_REQUEST, message } }).catch((error: Error) => warn(error.message));
  };
  const reader = new LineReader(
    MAX_STDIO_MESSAGE_BYTES,
    (line) => {
      notice(line);
      lines.write(Buffer.concat([line, NEWLINE]));
    },
    refuse,
  );
  const end = () => {
    if (!lines.writableEnded) lines.end();
  };
  process.stdin.on("data", (chunk: Buffer) => reader.push(chunk));
  process.stdin.once("end", end);
  process.stdin.once("close", end);
  process.stdin.once("error", (error) => lines.destroy(error));
  return transport;
}

/** `line` parsed as JSON, or `undefined` when it is not JSON (the SDK answers it). */
function parseJson(line: Buffer): unknown {
  try {
    return JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
}
