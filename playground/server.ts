#!/usr/bin/env node
/**
 * The playground: a local web page that is a real MCP Apps host for the reader.
 * This process serves the page and the real backchannel server over Streamable HTTP
 * at /mcp, both on 127.0.0.1; the page connects to /mcp with the SDK's `Client` and
 * renders the reader through ext-apps' `AppBridge`. It uses backchannel as a library,
 * through its package exports, as any other server would.
 *
 *     node dist/playground/server.js [--port N] [--host H] [--home DIR] [--reader-html FILE]
 *
 * Its channels (and saved apps) go to a data directory of its own, beside the one
 * `backchannel serve` uses (`~/.local/state/backchannel-playground` on Linux): trying
 * the playground leaves nothing among a user's real channels. `--home DIR`, or a store
 * chosen explicitly in the environment (`BACKCHANNEL_HOME`, `BACKCHANNEL_STORE`,
 * `BACKCHANNEL_STORE_FILE`), puts them there instead, e.g. to show a real agent's channel.
 *
 * `--reader-html` serves another build of the reader (e.g. an older one, to compare:
 * the benchmark of long documents does).
 *
 * Prints `backchannel playground: <url>` on stdout once it listens.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  bannerLocation,
  createMcpRequestListener,
  listen,
  MCP_PATH,
  openStore,
  resolveDataDir,
  type StoreLocation,
  storeLocationFromEnv,
  watchCommand,
  watcherWhere,
} from "backchannel-mcp/server";

/** The page Vite built from playground/web/, everything inlined. */
const PAGE = new URL("./web/index.html", import.meta.url);
/** Stands for the channel id in the watch command handed to the page (host.ts reads it). */
const CHANNEL_PLACEHOLDER = "CHANNEL_ID";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: process.env.PORT ?? "5180" },
    host: { type: "string", default: "127.0.0.1" },
    home: { type: "string" },
    "reader-html": { type: "string" },
  },
  strict: true,
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`playground: --port takes a port number (0 picks a free one), not ${JSON.stringify(values.port)}\n`);
  process.exit(1);
}

const { location, own } = playgroundLocation(values.home);
const { store } = await openStore(location);
// The watch command the page shows names the store, for an agent whose shell lacks this environment:
// the playground's own data directory is never the default one, so the command always names it.
const { where, warning } = watcherWhere(location, location.kind === "file" ? { ...process.env, BACKCHANNEL_HOME: location.dataDir } : process.env);
if (warning) process.stderr.write(`playground: ${warning}\n`);
const mcp = createMcpRequestListener({ store, watcherWhere: where, ...(values["reader-html"] ? { readerHtmlPath: values["reader-html"] } : {}) });
const server = createServer((req, res) => {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === MCP_PATH) {
    mcp(req, res).catch((error: Error) => process.stderr.write(`playground: ${error.message}\n`));
  } else if ((path === "/" || path === "/index.html") && req.method === "GET") {
    readFile(PAGE).then(
      (page) => res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(withWatchCommand(page)),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("the playground page is not built: run `npm run build`\n"),
    );
  } else {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }
});

try {
  const url = await listen(server, { port, host: values.host });
  process.stdout.write(`backchannel playground: ${url}\n`);
  const whose = own ? " (the playground's own; --home DIR or BACKCHANNEL_HOME to use another)" : "";
  process.stderr.write(`${bannerLocation(location)}${whose}; stop with Ctrl+C\n`);
} catch (error) {
  const taken = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
  process.stderr.write(`playground: ${taken ? `port ${port} is taken; pass --port 0 for a free one` : (error as Error).message}\n`);
  process.exit(1);
}

/**
 * Where the playground keeps its channels: `home` (`--home`), else a store the
 * environment names explicitly, else (`own`) the playground's own data directory, the
 * default one's name with `-playground` after it.
 */
function playgroundLocation(home: string | undefined): { location: StoreLocation; own: boolean } {
  if (home !== undefined) return { location: { kind: "file", dataDir: resolve(home) }, own: false };
  const env = process.env;
  if (env.BACKCHANNEL_HOME || env.BACKCHANNEL_STORE?.trim() || env.BACKCHANNEL_STORE_FILE?.trim())
    return { location: storeLocationFromEnv(), own: false };
  return { location: { kind: "file", dataDir: `${resolveDataDir()}-playground` }, own: true };
}

/**
 * `page` with the watch command of this store in it (`CHANNEL_ID` for the channel): the
 * page shows it for a channel it re-opens after a reload, which no `open_reader` result names.
 */
function withWatchCommand(page: Buffer): string {
  const command = JSON.stringify(watchCommand(CHANNEL_PLACEHOLDER, { where })).replace(/</g, "\\u003c");
  return page.toString("utf8").replace(/<head>/i, `<head><script type="application/json" id="watch-command">${command}</script>`);
}
