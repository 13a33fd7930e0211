/**
 * backchannel over stdio: stdout carries protocol only; everything for people goes to stderr.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { limitsFromEnv } from "../core/limits.js";
import { createServer } from "../server.js";
import { FileStore } from "../store/file-store.js";
import { VERSION } from "../version.js";

/** How often the server removes idle channels. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Serves MCP on this process's stdin/stdout until stdin closes, over the file store in
 * the data directory (`$BACKCHANNEL_HOME` or the per-user default). Prints a one-line
 * banner on stderr.
 * @throws Error when a limit variable in the environment is malformed.
 */
export async function runStdioServer(): Promise<void> {
  const store = new FileStore({ limits: limitsFromEnv() });
  const sweep = () =>
    store.removeIdleChannels().catch((error: Error) => process.stderr.write(`backchannel: idle sweep failed: ${error.message}\n`));
  await sweep();
  setInterval(sweep, SWEEP_INTERVAL_MS).unref();
  serveStdio(() => createServer({ store, maxAgentWaitMs: store.limits.maxAgentWaitMs, maxUiWaitMs: store.limits.maxUiWaitMs }), {
    onerror: (error) => process.stderr.write(`backchannel: ${error.message}\n`),
  });
  process.stderr.write(`backchannel ${VERSION}: MCP server on stdio, data in ${store.dataDir}\n`);
}
