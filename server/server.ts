/**
 * The backchannel MCP server: a factory for a configured `McpServer`, independent of
 * the transport that carries it.
 */
import { McpServer } from "@modelcontextprotocol/server";
import type { ChannelStore } from "./store/store.js";
import { registerChannelTools, type ChannelToolOptions } from "./tools/channel-tools.js";
import { registerReaderTools, type ReaderToolOptions } from "./tools/reader-tools.js";
import { registerRecipeTools } from "./tools/recipe-tools.js";
import { INSTRUCTIONS } from "./instructions.js";
import { NAME, VERSION } from "./version.js";

/** Options of {@link createServer}. */
export interface ServerOptions extends ChannelToolOptions, ReaderToolOptions {
  /** The store every tool reads and writes. */
  store: ChannelStore;
}

/** A new `McpServer` with backchannel's tools and instructions, not yet connected. */
export function createServer(options: ServerOptions): McpServer {
  const server = new McpServer(
    { name: NAME, version: VERSION },
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
  );
  registerChannelTools(server, options.store, options);
  registerReaderTools(server, options.store, options);
  registerRecipeTools(server);
  return server;
}
