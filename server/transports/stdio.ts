/**
 * backchannel over stdio: stdout carries protocol only; everything for people goes to stderr.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { limitsFromEnv } from "../../core/limits.js";
import { createServer } from "../server.js";
import { sessionKey } from "../../core/session-key.js";
import { startIdleSweep } from "../idle-sweep.js";
import { FileStore } from "../../store/file/file-store.js";
import { VERSION } from "../../core/package.js";
import { warnOnStderr } from "../../core/warn.js";

/** Options of {@link runStdioServer}. */
export interface StdioServerOptions {
  /** Push questions to Claude Code as channel notifications (see ../awareness/claude-channel.ts). Default false. */
  claudeChannel?: boolean;
}

/**
 * Serves MCP on this process's stdin/stdout until stdin closes, over the file store in
 * the data directory (`$BACKCHANNEL_HOME` or the per-user default). Prints a one-line
 * banner on stderr.
 * @throws Error when a limit variable in the environment is malformed.
 */
export async function runStdioServer(options: StdioServerOptions = {}): Promise<void> {
  const store = new FileStore({ limits: limitsFromEnv() });
  // Computed once: every connection of this process serves the same host session.
  const key = sessionKey();
  startIdleSweep(store);
  const serverOptions = {
    store,
    maxAgentWaitMs: store.limits.maxAgentWaitMs,
    maxUiWaitMs: store.limits.maxUiWaitMs,
    claudeChannel: options.claudeChannel,
    sessionKey: key,
  };
  serveStdio(() => createServer(serverOptions), {
    onerror: (error) => warnOnStderr(error.message),
  });
  const push = options.claudeChannel ? ", pushing to Claude Code channels" : "";
  process.stderr.write(`backchannel ${VERSION}: MCP server on stdio, data in ${store.dataDir}, session ${key}${push}\n`);
}
