/**
 * The backchannel MCP server: a factory for a configured `McpServer`, independent of
 * the transport that carries it.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { Awareness } from "./awareness/awareness.js";
import { CLAUDE_CHANNEL_CAPABILITY } from "./awareness/claude-channel.js";
import type { ChannelStore } from "../store/store.js";
import { registerChannelTools, type ChannelToolOptions } from "./tools/channel-tools.js";
import { registerReaderTools, type ReaderToolOptions } from "./tools/reader-tools.js";
import { registerRecipeTools } from "./tools/recipe-tools.js";
import { registerWallTools } from "./tools/wall-tools.js";
import { registerAppTools } from "./tools/app-tools.js";
import { registerWatchTools } from "./tools/watch-tools.js";
import { WaitSlots } from "./tools/wait-slots.js";
import { instructions } from "./instructions.js";
import { type ClientView, FULL_VIEW } from "./client-view.js";
import { withholdAppOnlyTools } from "./tools/app-only.js";
import { registerBrowserTools } from "./tools/browser-tools.js";
import { NAME, VERSION } from "../core/package.js";

/** Options of {@link createServer}. */
export interface ServerOptions extends Omit<ChannelToolOptions & ReaderToolOptions, "awareness" | "client"> {
  /** The store every tool reads and writes. */
  store: ChannelStore;
  /** The host session's key. Default: this process's, found once (CLAUDE_PID, the topmost `claude` process, else the parent). */
  sessionKey?: string;
  /** Declare `claude/channel` and push each question as a Claude Code channel notification. Default false. */
  claudeChannel?: boolean;
  /**
   * Watch the channels the model uses, to keep the tool description current (and
   * advertise `tools.listChanged`, which only that sends). Default true; off for stateless HTTP.
   */
  watchChannels?: boolean;
  /**
   * What the client can do (./client-view.ts): the tools it is offered, what its model
   * is told, where the reader shows. Default: everything (a client that declared nothing
   * readable).
   */
  client?: ClientView;
}

/** What `createServer` needs besides its options: the waiting calls' slots (pass the process's own when several servers share a process). */
function waitSlotsOf(options: ServerOptions): WaitSlots {
  return options.waitSlots ?? new WaitSlots(options.store.limits.maxWaitingCalls, "server");
}

/**
 * A new `McpServer` with backchannel's tools and instructions, not yet connected. Its
 * background watches end when its connection closes.
 */
export function createServer(options: ServerOptions): McpServer {
  const claudeChannel = options.claudeChannel ?? false;
  const client = options.client ?? FULL_VIEW;
  const watchChannels = options.watchChannels ?? true;
  const server = new McpServer(
    { name: NAME, version: VERSION },
    {
      // Advertise only the notifications this server sends: tools/list_changed when a
      // watched channel changes poll_agent_messages's description, resources never
      // (every resource is registered once, here). Set here, since the SDK would default both to true.
      capabilities: {
        tools: { listChanged: watchChannels },
        resources: { listChanged: false },
        ...(claudeChannel ? { experimental: { [CLAUDE_CHANNEL_CAPABILITY]: {} } } : {}),
      },
      instructions: instructions(options.readLocalFiles ?? true, options.watcherWhere, client),
    },
  );
  const awareness = new Awareness(server, options.store, { sessionKey: options.sessionKey, claudeChannel, watchChannels });
  const waitSlots = waitSlotsOf(options);
  registerChannelTools(server, options.store, { ...options, awareness, waitSlots });
  registerReaderTools(server, options.store, { ...options, client, awareness });
  registerWallTools(server, awareness.session);
  registerRecipeTools(server, { watcherWhere: options.watcherWhere });
  registerAppTools(server, options.store, { awareness, watcherWhere: options.watcherWhere, client, browser: options.browser });
  registerWatchTools(server, options.store, waitSlots);
  if (options.browser) registerBrowserTools(server, options.browser);
  if (!client.callsAppTools) withholdAppOnlyTools(server);
  return server;
}
