/**
 * Everything one server (one MCP connection) does to let the agent and the human know
 * that something waits: it records the channels the model uses in the host session,
 * watches their agent queues, keeps `poll_agent_messages`'s description current and,
 * when enabled, pushes Claude Code channel notifications.
 */
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/server";
import { currentSessionKey } from "../../core/session-key.js";
import type { ChannelStore } from "../../store/store.js";
import { AgentInbox } from "./agent-inbox.js";
import { ClaudeChannelPusher } from "./claude-channel.js";
import { Session } from "./session.js";
import { WaitingDescription } from "./waiting-description.js";
import { warnOnStderr } from "../../core/warn.js";

/** Options of {@link Awareness}. */
export interface AwarenessOptions {
  /** The host session's key. Default: this process's (`currentSessionKey()` in core/session-key.ts). */
  sessionKey?: string;
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

/**
 * The awareness of one server: made by `createServer` and handed to every module that
 * registers tools on that server. It closes itself when the server's connection closes.
 */
export class Awareness {
  /** The host session this server serves. */
  readonly session: Session;
  private readonly inbox: AgentInbox;
  private readonly pusher: ClaudeChannelPusher | undefined;
  private readonly descriptions: WaitingDescription[] = [];
  private readonly warn: (message: string) => void;
  private readonly watchChannels: boolean;

  /** @throws Error when `options.sessionKey` is not a valid session key. */
  constructor(server: McpServer, store: ChannelStore, options: AwarenessOptions = {}) {
    this.warn = options.warn ?? warnOnStderr;
    this.session = new Session(options.sessionKey ?? currentSessionKey(), store);
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
   * this process the channel's push owner; `title`: what it was opened as): the channel joins the session and is
   * watched from now on. Never throws: a failure here is reported and must not fail
   * the tool call that did the real work.
   */
  async useChannel(channelId: string, app: "reader" | "channel", opened = false, title?: string): Promise<void> {
    try {
      await this.session.addChannel(channelId, app, title);
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
