/**
 * The browser host (docs/ARCHITECTURE.md, "The browser host"): a page on this machine
 * that shows a channel's app to a person whose agent runs where no app can show (a
 * terminal agent), or beside a chat (the pop-out). One process serves, on 127.0.0.1:
 *
 * - the page (web/page/, built into dist/web/page/), a real MCP Apps host, and the frame
 *   each app runs in;
 * - the MCP endpoint the page's sessions use (Streamable HTTP, the server of
 *   server/transports/http.ts) over the store the agent's server uses, file or Redis;
 * - the list of open channels;
 *
 * all behind the gate of ./gate.ts (the links' key, exchanged for a session).
 *
 * As the store's host (`mode: "host"`) it is the one host of that store: it holds the
 * store's host lock for as long as it runs and writes its record beside it
 * (core/browser-host.ts), so every server finds it; it ends after `idleMs` unused, and
 * when its record is gone (its data directory removed). The playground (`mode:
 * "playground"`) is the same page with its agent panel, on a port of its own, and does
 * not stand for its store.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { setImmediate } from "node:timers/promises";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  type BrowserHostRecord,
  browserHostFiles,
  browserHostLink,
  browserHostSecret,
  readBrowserHostRecord,
  runningBrowserHost,
  writeBrowserHostRecord,
} from "../core/browser-host.js";
import { watchCommand } from "../core/commands.js";
import { CallerError } from "../core/errors.js";
import { isChannelId } from "../core/ids.js";
import { withLock } from "../core/fs/lock.js";
import { APPS_HOST_EXTENSIONS, BROWSER_HOST_NAME } from "../protocol/client-capabilities.js";
import { VERSION } from "../core/package.js";
import { warnOnStderr } from "../core/warn.js";
import { READER_APP, SHELL_APP } from "../server/apps/resource.js";
import { browserDataDir, browserStoreKey, localBrowserHost } from "../server/browser-host.js";
import { storeMaxMessageBytes } from "../server/reader/ask-history.js";
import { readReaderState } from "../server/reader/reader-state.js";
import type { BrowserLinks } from "../server/browser-links.js";
import { createMcpRequestListener, listen } from "../server/transports/http.js";
import { openStore, type StoreLocation, watcherWhere } from "../store/open.js";
import type { ChannelStore } from "../store/store.js";
import { listOpenChannels } from "./channels.js";
import { GUARD_HEADERS, judgeRequest, newSession, sendRefusal } from "./gate.js";
import { aheadReaderParts } from "./ahead-frame.js";
import { AHEAD_FRAME, type PageConfig, readPageFiles } from "./page-files.js";

/** Another host already runs for the store; `record` says where. */
export class BrowserHostRunningError extends CallerError {
  override readonly name = "BrowserHostRunningError";
  override readonly code = "BROWSER_HOST";
  constructor(readonly record: BrowserHostRecord) {
    super(`a browser host already runs for this store (pid ${record.pid}, ${record.url}); stop it with "backchannel web --stop"`);
  }
}

/** Options of {@link startBrowserHost}. */
export interface BrowserHostOptions {
  location: StoreLocation;
  /** `host`: the store's one host; `playground`: the page with its agent panel, apart. */
  mode: "host" | "playground";
  /** The port. Default: the port the store's last host had, when free; else any free one. */
  port?: number;
  /** End after this long with no request (none in flight either). Default: never. */
  idleMs?: number;
  /** The reader's HTML, instead of the built one (to compare builds). */
  readerHtmlPath?: string;
  /** Where notes go. Default: stderr. */
  warn?: (message: string) => void;
}

/** A running browser host. */
export interface RunningBrowserHost {
  /** Where it listens, `http://127.0.0.1:<port>/`. */
  url: URL;
  /** The link that opens `channelId` (none: the list of channels), with the key. */
  link(channelId?: string): string;
  /** The store it serves. */
  store: ChannelStore;
  /** Resolves once it has stopped (closed, idle, or its record gone). */
  closed: Promise<void>;
  /** Stops it: no new request, the store closed, the lock released. */
  close(): Promise<void>;
}

/** How often the host checks that its record is still there, and whether it has been idle long enough. */
const CHECK_MS = 2_000;

/**
 * Starts a browser host for `options.location`.
 * @throws BrowserHostRunningError when another host runs for the store (`mode: "host"`);
 *   LockTimeoutError when one was starting meanwhile; Error when the page is not built
 *   or the port is taken (`EADDRINUSE`).
 */
export async function startBrowserHost(options: BrowserHostOptions): Promise<RunningBrowserHost> {
  const warn = options.warn ?? warnOnStderr;
  const dataDir = browserDataDir(options.location);
  const files = browserHostFiles(dataDir, browserStoreKey(options.location));
  const secret = browserHostSecret(dataDir, files, warn);
  const pages = await readPageFiles();
  const registered = options.mode === "host";
  let stopped!: () => void;
  const stop = new Promise<void>((resolve) => (stopped = resolve));
  let lockHeld: Promise<void> = stop;
  if (registered) {
    const running = runningBrowserHost(dataDir, files);
    if (running) throw new BrowserHostRunningError(running);
    // Held for the host's whole life: while it is, every process finds this host (core/browser-host.ts).
    let acquired!: () => void;
    const taken = new Promise<void>((resolve) => (acquired = resolve));
    lockHeld = withLock(files.record, { staleMs: 10_000, warn }, () => {
      acquired();
      return stop;
    });
    await Promise.race([taken, lockHeld]);
  }

  const opened = await openStore(options.location, { warn });
  const { where } = watcherWhere(
    options.location,
    options.location.kind === "file" ? { ...process.env, BACKCHANNEL_HOME: options.location.dataDir } : process.env,
  );
  let port = 0;
  const link = (channelId?: string) => browserHostLink(`http://127.0.0.1:${port}/`, secret, channelId);
  // The host's own links lead here; the playground's pop-out leads to its store's host.
  const browser: BrowserLinks = registered ? { linkTo: async (channelId) => link(channelId) } : localBrowserHost(options.location);
  const mcp = createMcpRequestListener({
    store: opened.store,
    watcherWhere: where,
    browser,
    ...(options.readerHtmlPath ? { readerHtmlPath: options.readerHtmlPath } : {}),
  });
  const config: PageConfig = {
    mode: options.mode,
    watch: watchCommand("CHANNEL_ID", { where }),
    resources: { open_reader: READER_APP.uri, open_app: SHELL_APP.uri },
  };
  /** What the page takes from the host instead of asking its endpoint, asked once the host listens (see {@link askOwnEndpoint}). */
  let asked: Promise<AskedAhead> = Promise.resolve({});

  let inFlight = 0;
  let lastActivity = Date.now();
  /** Answers with the page; `session`: the link's exchange, whose page moves to the session's address (`extra`: its cookie). */
  const sendPage = async (res: ServerResponse, session?: string, extra: Record<string, string> = {}) => {
    const { discover, readerHtml } = await asked;
    // The reader started ahead is for a link's first app: the playground opens its own.
    const page = { ...config, ...(discover ? { discover } : {}), ...(registered && readerHtml !== undefined ? { aheadApp: READER_APP.uri } : {}) };
    const { body, headers } = pages.page(page, session);
    res.writeHead(200, { ...headers, ...extra }).end(body);
  };
  /**
   * What the reader is told of the server beside its state, as the session's own
   * `reader_state` tells it: the frame started ahead carries the state of the channel it
   * is for (./ahead-frame.ts), or the reader asks when it cannot be read.
   */
  const readerInfo = { max_message_bytes: storeMaxMessageBytes(opened.store), browser_tab: true };
  const route = async (path: string, req: IncomingMessage, res: ServerResponse) => {
    if (path === "mcp") return mcp(req, res);
    if (req.method !== "GET") return void res.writeHead(405, { ...GUARD_HEADERS, allow: "GET" }).end();
    if (path === "") return sendPage(res);
    if (path === "frame") return void res.writeHead(200, pages.frame.headers).end(pages.frame.body);
    if (path === AHEAD_FRAME) {
      const { readerHtml } = await asked;
      if (readerHtml === undefined) return void res.writeHead(404, { ...GUARD_HEADERS, "content-type": "text/plain" }).end("not found\n");
      const channelId = new URL(req.url ?? "", "http://host").searchParams.get("channel");
      const state = isChannelId(channelId) ? await readReaderState(opened.store, channelId, readerInfo).catch(() => null) : null;
      res.writeHead(200, pages.frame.headers);
      // The chunks go out as they are made, the host's other requests served in between.
      for (const part of state ? aheadReaderParts(readerHtml, state) : [readerHtml]) {
        if (res.destroyed) return;
        if (!res.write(part)) await Promise.race([once(res, "drain"), once(res, "close")]);
        await setImmediate();
      }
      return void res.end();
    }
    if (path === "channels") {
      const channels = await listOpenChannels(opened.store);
      return void res.writeHead(200, { ...GUARD_HEADERS, "content-type": "application/json" }).end(JSON.stringify({ channels }));
    }
    res.writeHead(404, { ...GUARD_HEADERS, "content-type": "text/plain" }).end("not found\n");
  };
  const server = createHttpServer((req, res) => {
    inFlight += 1;
    lastActivity = Date.now();
    res.once("close", () => {
      inFlight -= 1;
      lastActivity = Date.now();
    });
    const verdict = judgeRequest(req, { port, secret });
    if (verdict.kind === "refuse") return sendRefusal(res);
    const served = verdict.kind === "exchange" ? sendPage(res, verdict.location, { "set-cookie": verdict.cookie }) : route(verdict.route, req, res);
    served.catch((error: Error) => {
      warn(`browser host: ${error.message}`);
      if (!res.headersSent) res.writeHead(500, { ...GUARD_HEADERS, "content-type": "text/plain" }).end("the host failed; see its output\n");
    });
  });

  let url: URL;
  try {
    url =
      options.port !== undefined ? await listen(server, { host: "127.0.0.1", port: options.port }) : await listenOnPort(server, previousPort(files));
  } catch (error) {
    stopped();
    await Promise.allSettled([lockHeld, opened.close()]);
    throw error;
  }
  port = Number(url.port);
  asked = askOwnEndpoint(url, secret, warn);
  if (registered) writeBrowserHostRecord(files, { pid: process.pid, url: url.href, version: VERSION, started_at: new Date().toISOString() });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearInterval(checks);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await opened.close();
      stopped();
      await lockHeld.catch(() => undefined);
    })();
    return closing;
  };
  const checks = setInterval(
    () => {
      const idle = options.idleMs !== undefined && inFlight === 0 && Date.now() - lastActivity >= options.idleMs;
      // A record gone (its data directory removed) or taken over: this host is no longer the store's.
      const orphaned = registered && (!existsSync(files.record) || readBrowserHostRecord(files)?.pid !== process.pid);
      if (idle || orphaned) void close();
    },
    Math.min(CHECK_MS, options.idleMs ?? CHECK_MS),
  );
  checks.unref();
  return { url, link, store: opened.store, closed: stop.then(() => closing), close };
}

/** The port the store's last host listened on (its record stays after it ends), or 0 for any. */
function previousPort(files: ReturnType<typeof browserHostFiles>): number {
  const url = readBrowserHostRecord(files)?.url;
  return url ? Number(new URL(url).port) : 0;
}

/** Listens on 127.0.0.1:`port` (the last host's), or on any free port when that one is taken. */
async function listenOnPort(server: ReturnType<typeof createHttpServer>, port: number): Promise<URL> {
  try {
    return await listen(server, { host: "127.0.0.1", port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || port === 0) throw error;
    return listen(server, { host: "127.0.0.1", port: 0 });
  }
}

/** What the host asked its own endpoint ahead: the discover answer the page adopts, and the reader's HTML it serves as the ahead frame. */
interface AskedAhead {
  discover?: PageConfig["discover"];
  readerHtml?: string;
}

/**
 * What the page would ask the host's own MCP endpoint (at `url`) first, asked once as
 * the page asks it (an MCP Apps host, on 2026-07-28), through a session of its own: its
 * answer to `server/discover`, which the page adopts instead of asking (one round trip
 * fewer before its first call), and the reader's `ui://` resource, read ahead as MCP
 * Apps hosts may read UI resources: the host serves its HTML as the frame the page's
 * first script loads on a link (web/page-files.ts, `AHEAD_FRAME`), so the reader loads
 * while the page's own script does. Nothing when it fails (said with `warn`): the page
 * then reads the reader itself.
 */
async function askOwnEndpoint(url: URL, secret: string, warn: (message: string) => void): Promise<AskedAhead> {
  const session = newSession(secret);
  const client = new Client(
    { name: BROWSER_HOST_NAME, version: VERSION },
    { capabilities: { extensions: APPS_HOST_EXTENSIONS }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${session.path}mcp`, url), { requestInit: { headers: { cookie: session.cookie } } }),
    );
    const discover = client.getDiscoverResult();
    const { contents } = await client.readResource({ uri: READER_APP.uri });
    const readerHtml = contents[0] && "text" in contents[0] ? contents[0].text : undefined;
    return { ...(discover ? { discover } : {}), ...(readerHtml !== undefined ? { readerHtml } : {}) };
  } catch (error) {
    warn(`browser host: reading its own endpoint ahead failed, so each page asks it: ${(error as Error).message}`);
    return {};
  } finally {
    await client.close().catch(() => undefined);
  }
}
