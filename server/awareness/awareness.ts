/**
 * Everything one server (one MCP connection) does to let the agent and the human know
 * that something waits: it records the channels the model uses in the host session,
 * watches their agent queues, keeps `poll_agent_messages`'s description current and,
 * when enabled, pushes Claude Code channel notifications.
 */
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/server";
import { sessionKey } from "../../core/session-key.js";
import type { ChannelStore } from "../../store/store.js";
import { AgentInbox } from "./agent-inbox.js";
import { ClaudeChannelPusher } from "./claude-channel.js";
import { Session } from "./session.js";
import { WaitingDescription } from "./waiting-description.js";

/** Options of {@link Awareness}. */
export interface AwarenessOptions {
  /** The host session's key (see `sessionKey()` in ../core/session-key.ts). */
  sessionKey: string;
  /** Push Claude Code channel notifications. Default false. */
  claudeChannel?: boolean;
  /**
   * Watch the channels the model uses in the background. Default true. Off for a server
   * that serves one stateless HTTP request: it could tell no one, and nothing would stop its watches.
   */
  watchChannels?: boolean;
  /** Where failures are reported. Default: one line on stderr. */
  warn?: (message: string) => void;
}

/** One awareness per server, shared by every module that registers tools on it. */
const byServer = new WeakMap<McpServer, Awareness>();

/** The awareness of one server. It closes itself when the server's connection closes. */
export class Awareness {
  /**
   * The awareness of `server`, made on first use with `options` (default: the session
   * key from `sessionKey()`, no channel push, channels watched). Later calls return the
   * same one and ignore `options`.
   */
  static of(server: McpServer, store: ChannelStore, options: Partial<AwarenessOptions> = {}): Awareness {
    let awareness = byServer.get(server);
    if (!awareness) {
      awareness = new Awareness(server, store, { ...options, sessionKey: options.sessionKey ?? sessionKey() });
      byServer.set(server, awareness);
    }
    return awareness;
  }

  /** The host session this server serves. */
  readonly session: Session;
  private readonly inbox: AgentInbox;
  private readonly pusher: ClaudeChannelPusher | undefined;
  private readonly descriptions: WaitingDescription[] = [];
  private readonly warn: (message: string) => void;
  private readonly watchChannels: boolean;

  constructor(server: McpServer, store: ChannelStore, options: AwarenessOptions) {
    this.warn = options.warn ?? ((message) => process.stderr.write(`backchannel: ${message}\n`));
    this.session = new Session(options.sessionKey, store);
    this.watchChannels = options.watchChannels ?? true;
    this.inbox = new AgentInbox(store, { warn: this.warn });
    this.pusher = options.claudeChannel ? new ClaudeChannelPusher(server, store, this.inbox, process.pid, this.warn) : undefined;
    const closed = server.server.onclose;
    server.server.onclose = () => {
      this.close();
      closed?.();
    };
  }

  /**
   * Notes that the model used `channelId` (`opened`: with `open_reader`, which also makes
   * this process the channel's push owner): the channel joins the session and is
   * watched from now on. Never throws: a failure here is reported and must not fail
   * the tool call that did the real work.
   */
  async useChannel(channelId: string, app: "reader" | "channel", opened = false): Promise<void> {
    try {
      await this.session.addChannel(channelId, app);
      if (opened) await this.pusher?.claim(channelId);
      if (this.watchChannels) await this.inbox.watch(channelId);
    } catch (error) {
      this.warn(`could not watch channel ${channelId}: ${(error as Error).message}`);
    }
  }

  /** Reads a channel the model just polled again, so that what it took stops counting as waiting at once. */
  async refresh(channelId: string): Promise<void> {
    await this.inbox.refresh(channelId);
  }

  /** Keeps `tool`'s description (`base` plus what waits) current from now on. */
  describeWaiting(tool: RegisteredTool, base: string): void {
    this.descriptions.push(new WaitingDescription(tool, base, this.inbox));
  }

  /** Stops every watch, timer and listener. */
  close(): void {
    this.descriptions.forEach((description) => description.close());
    this.pusher?.close();
    this.inbox.close();
  }
}
