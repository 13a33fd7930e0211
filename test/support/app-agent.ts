/**
 * A scripted agent for agent-written apps: a program, no model, that does what the
 * custom-apps recipe says, literally. It reads the recipe through MCP and takes the
 * apps' HTML and the calls written for them; it opens an app through the host (a
 * model's tool call goes through its host, which renders the app), runs the watcher
 * command the result names as a background command, and, each time the watcher exits,
 * reads and clears its queue, re-arms, and replies with the calls the recipe writes.
 */
import type { Client } from "@modelcontextprotocol/client";
import { backchannelCommand } from "../../core/commands.js";
import { structured } from "./helpers.js";
import { commands, fill, findCall, htmlBlocks, toolCalls, type WrittenToolCall } from "./recipe-text.js";
import { readRecipe } from "./scripted-agent.js";
import { runShellCommand, type ShellCommand } from "./shell-command.js";

/** A message of the agent's queue. */
export interface AgentMessage {
  seq: number;
  event: string;
  data: Record<string, unknown>;
  /** When the server queued it (ISO-8601). */
  ts: string;
}

/** What `open_app` returns for an app. */
export interface OpenedAppResult {
  channel_id: string;
  title: string;
  watch_command: string;
  name?: string;
  description?: string;
}

/** Makes a model's tool call through the host (which renders the app) and returns its result. */
export type HostCall = (
  name: string,
  args: Record<string, unknown>,
) => Promise<{ structuredContent?: unknown; isError?: boolean; content?: unknown }>;

/** The custom-apps recipe as the agent reads it. */
export class AppRecipe {
  private constructor(
    /** Every tool call written in the recipe. */
    readonly calls: WrittenToolCall[],
    /** The apps' HTML, by the placeholder that names it (`poll_html`, `list_html`). */
    readonly html: Record<string, string>,
    /** The watcher command as the recipe writes it, `<channel_id>` unfilled. */
    readonly watchCommand: string,
  ) {}

  /**
   * Reads the recipe through `read_recipe`.
   * @throws when it writes no watcher command.
   */
  static async read(client: Client): Promise<AppRecipe> {
    return AppRecipe.of(await readRecipe(client, "custom-apps"));
  }

  /**
   * The recipe whose text is `text` (as a model reads it in `read_recipe`'s result).
   * @throws when it writes no watcher command.
   */
  static of(text: string): AppRecipe {
    const watch = commands(text, backchannelCommand()).find((command) => command.includes(" watch "));
    if (!watch) throw new Error("custom-apps writes no watcher command");
    return new AppRecipe(toolCalls(text), htmlBlocks(text), watch);
  }

  /** The written `open_app` call that opens the app `placeholder` names, its HTML filled in. */
  openCall(placeholder: string): Record<string, unknown> {
    const call = this.calls.find((candidate) => candidate.name === "open_app" && candidate.args.html === `<${placeholder}>`);
    if (!call) throw new Error(`custom-apps writes no open_app call for <${placeholder}>`);
    return fill(call.args, this.html);
  }

  /** The written `notify_ui` call that sends `event`, for `channelId`. */
  reply(channelId: string, event: string): Record<string, unknown> {
    return fill(findCall(this.calls, "notify_ui", { event }).args, { channel_id: channelId });
  }

  /** The first written call of `name` (whose arguments include `where`), for `channelId`. */
  call(name: string, channelId: string, where: Record<string, unknown> = {}): Record<string, unknown> {
    return fill(findCall(this.calls, name, where).args, { channel_id: channelId });
  }
}

/** How long {@link AgentApp.wake} waits for the watcher. */
const WAKE_TIMEOUT_MS = 60_000;

/** An app the agent opened, with the watcher that wakes the agent for it. */
export class AgentApp {
  private watcher: ShellCommand;

  private constructor(
    private readonly client: Client,
    private readonly recipe: AppRecipe,
    private readonly shellEnv: Record<string, string>,
    readonly opened: OpenedAppResult,
  ) {
    this.watcher = runShellCommand(opened.watch_command, shellEnv);
  }

  /**
   * Opens an app with `args` through the host, then arms the watcher its result names.
   * @throws when the call fails, or the result's watcher command is not the recipe's.
   */
  static async open(
    client: Client,
    recipe: AppRecipe,
    host: HostCall,
    args: Record<string, unknown>,
    shellEnv: Record<string, string>,
  ): Promise<AgentApp> {
    const opened = structured<OpenedAppResult>(await host("open_app", args));
    const written = fill(recipe.watchCommand, { channel_id: opened.channel_id });
    if (written !== opened.watch_command) throw new Error(`custom-apps writes the watcher as ${written}, open_app returned ${opened.watch_command}`);
    return new AgentApp(client, recipe, shellEnv, opened);
  }

  /** The app's channel. */
  get channelId(): string {
    return this.opened.channel_id;
  }

  /**
   * Waits until the watcher wakes the agent (exit 0), reads and clears the queue with
   * the poll the recipe writes, re-arms the watcher, and returns what it read.
   * @throws when the watcher exits otherwise.
   */
  async wake(): Promise<AgentMessage[]> {
    // A safety net well past any wake on a loaded machine, which fails with what the
    // watcher said instead of holding the suite to its own timeout.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), WAKE_TIMEOUT_MS)));
    const code = await Promise.race([this.watcher.exited, late]).finally(() => clearTimeout(timer));
    if (code === "late") throw new Error(`no message woke the watcher of ${this.channelId} in ${WAKE_TIMEOUT_MS / 1000} s: ${this.watcher.stderr()}`);
    if (code !== 0) throw new Error(`the watcher exited ${code}: ${this.watcher.stderr()}`);
    const poll = this.recipe.call("poll_agent_messages", this.channelId);
    const { messages } = structured<{ messages: AgentMessage[] }>(await this.client.callTool({ name: "poll_agent_messages", arguments: poll }));
    this.watcher = runShellCommand(this.opened.watch_command, this.shellEnv);
    return messages;
  }

  /**
   * Resolves once the watcher is armed (it says so on stderr), or has already exited
   * because a message waits. A user acts seconds after an app shows; a test that waits
   * for this clicks as late, not while the watcher is still starting.
   */
  async armed(): Promise<void> {
    await this.watcher.stderrMatching(/waiting for messages/);
  }

  /** Wakes until a message with `event` arrives; returns it, and everything read up to it in `seen` when given. */
  async until(event: string, seen: AgentMessage[] = []): Promise<AgentMessage> {
    for (;;) {
      const messages = await this.wake();
      seen.push(...messages);
      const found = messages.find((message) => message.event === event);
      if (found) return found;
    }
  }

  /** Sends `event` as the recipe writes it; `data`, when given, is the agent's own (e.g. the counts it tallied). */
  async reply(event: string, data?: Record<string, unknown>): Promise<void> {
    const args = this.recipe.reply(this.channelId, event);
    if (data !== undefined) args.data = data;
    structured(await this.client.callTool({ name: "notify_ui", arguments: args }));
  }

  /** Stops the watcher. */
  stop(): void {
    this.watcher.stop();
  }
}
