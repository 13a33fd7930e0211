/**
 * backchannel over stdio: stdout carries protocol only; everything for people goes to stderr.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { limitsFromEnv } from "../../core/limits.js";
import { createServer } from "../server.js";
import { sessionKey } from "../../core/session-key.js";
import { startIdleSweep } from "../idle-sweep.js";
import { bannerLocation, openStore, type StoreLocation, storeLocationFromEnv } from "../../store/open.js";
import { VERSION } from "../../core/package.js";
import { warnOnStderr } from "../../core/warn.js";

/** Options of {@link runStdioServer}. */
export interface StdioServerOptions {
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
  const serverOptions = {
    store,
    maxAgentWaitMs: limits.maxAgentWaitMs,
    maxUiWaitMs: limits.maxUiWaitMs,
    claudeChannel: options.claudeChannel,
    sessionKey: key,
  };
  serveStdio(() => createServer(serverOptions), {
    onerror: (error) => warnOnStderr(error.message),
  });
  process.stdin.once("end", () => void opened.close());
  const push = options.claudeChannel ? ", pushing to Claude Code channels" : "";
  process.stderr.write(`backchannel ${VERSION}: MCP server on stdio, ${bannerLocation(location)}, session ${key}${push}\n`);
}
