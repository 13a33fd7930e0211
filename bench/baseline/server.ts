/**
 * The baseline MCP server: backchannel's own tools and instructions over stdio, backed
 * by the plain {@link PollingStore} instead of the FileStore. Run as
 * `node dist/bench/baseline/server.js`; the data directory is `$BACKCHANNEL_HOME`.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { resolveDataDir } from "../../core/paths.js";
import { createServer } from "../../server/server.js";
import { PollingStore } from "./polling-store.js";

const store = new PollingStore(resolveDataDir());
serveStdio(() => createServer({ store }), {
  onerror: (error) => process.stderr.write(`baseline server: ${error.message}\n`),
});
