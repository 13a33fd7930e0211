/**
 * The four channel tools (DESIGN §5): the agent writes to the app with `notify_ui` and
 * reads from it with `poll_agent_messages`; the app does the mirror image with the
 * app-only `notify_agent` and `poll_ui_messages`. Each handler validates (the schema),
 * calls the store, and shapes the result.
 */
import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import type { QueueName } from "../core/paths.js";
import type { JsonValue, QueueMessage } from "../store/queue-file.js";
import type { ChannelStore } from "../store/store.js";
import { progressTicker } from "./progress.js";
import { toolError, toolResult } from "./results.js";
import { compactSchema, notifyInput, notifyOutput, pollInput, pollOutput } from "./schemas.js";
import { DEFAULT_LIMITS } from "../core/limits.js";

/** Options of {@link registerChannelTools}. */
export interface ChannelToolOptions {
  /** Longest `wait_ms` of `poll_agent_messages`. Default 300,000. */
  maxAgentWaitMs?: number;
  /** Longest `wait_ms` of `poll_ui_messages`. Default 30,000. */
  maxUiWaitMs?: number;
  /** How often a waiting poll sends `notifications/progress` (when the call has a progress token). Default 5,000. */
  progressIntervalMs?: number;
}

/** `_meta` of a tool that only the app may call. Only hosts enforce it: such tools must be harmless for the model too. */
const APP_ONLY = { ui: { visibility: ["app"] } } as const;

/**
 * Registers `notify_ui`, `poll_agent_messages` (model-visible), `poll_ui_messages` and
 * `notify_agent` (app-only) on `server`, backed by `store`.
 */
export function registerChannelTools(server: McpServer, store: ChannelStore, options: ChannelToolOptions = {}): void {
  const maxAgentWaitMs = options.maxAgentWaitMs ?? DEFAULT_LIMITS.maxAgentWaitMs;
  const maxUiWaitMs = options.maxUiWaitMs ?? DEFAULT_LIMITS.maxUiWaitMs;

  server.registerTool(
    "notify_ui",
    {
      title: "Send to the app",
      description: "Send an event to the app on a channel (for the reader: answer {thread_id, text}, hello {}, status {text}).",
      inputSchema: compactSchema(notifyInput),
      outputSchema: compactSchema(notifyOutput),
    },
    ({ channel_id, event, data }) => notify(store, channel_id, "ui", event, data),
  );

  server.registerTool(
    "poll_agent_messages",
    {
      title: "Read from the app",
      description:
        "Read what the app sent on a channel (for the reader: ask, ready). Clears what it returns unless you pass after (a cursor). wait_ms waits for a message.",
      inputSchema: compactSchema(pollInput(maxAgentWaitMs)),
      outputSchema: compactSchema(pollOutput),
    },
    ({ channel_id, after, wait_ms }, ctx) => poll(store, channel_id, "agent", after, wait_ms, ctx, options.progressIntervalMs),
  );

  registerAppTool(
    server,
    "poll_ui_messages",
    {
      title: "Read from the agent (app only)",
      description: "App only: read what the agent sent on a channel, after a cursor, waiting up to wait_ms.",
      inputSchema: compactSchema(pollInput(maxUiWaitMs)),
      outputSchema: compactSchema(pollOutput),
      _meta: APP_ONLY,
    },
    ({ channel_id, after, wait_ms }, ctx) => poll(store, channel_id, "ui", after, wait_ms, ctx, options.progressIntervalMs),
  );

  registerAppTool(
    server,
    "notify_agent",
    {
      title: "Send to the agent (app only)",
      description: "App only: send an event to the agent on a channel.",
      inputSchema: compactSchema(notifyInput),
      outputSchema: compactSchema(notifyOutput),
      _meta: APP_ONLY,
    },
    ({ channel_id, event, data }) => notify(store, channel_id, "agent", event, data),
  );
}

async function notify(store: ChannelStore, channelId: string, queue: QueueName, event: string, data: JsonValue | undefined) {
  try {
    const { seq, pending } = await store.append(channelId, queue, event, data);
    return toolResult({ seq, pending }, `Sent ${event} as seq ${seq} (${pending} waiting).`);
  } catch (error) {
    return toolError(error);
  }
}

async function poll(
  store: ChannelStore,
  channelId: string,
  queue: QueueName,
  after: number | undefined,
  waitMs: number | undefined,
  ctx: ServerContext,
  progressIntervalMs: number | undefined,
) {
  const reader = queue === "agent" ? "the app" : "the agent";
  const progress = progressTicker(ctx, waitMs ?? 0, (seconds) => `waiting for ${reader} on ${channelId} (${seconds} s)`, progressIntervalMs);
  try {
    const result = await store.poll(channelId, queue, { after, waitMs, signal: ctx.mcpReq.signal, onWaiting: progress.start });
    return toolResult({ ...result }, describePoll(result.messages, result.cursor, result.pending));
  } catch (error) {
    return toolError(error);
  } finally {
    progress.stop();
  }
}

/** The text of a poll result: a count line, then one JSON line per message (the data the model needs). */
function describePoll(messages: QueueMessage[], cursor: number, pending: number): string {
  const more = pending > 0 ? `; ${pending} more waiting, poll again` : "";
  if (messages.length === 0) return `No messages (cursor ${cursor}${more}).`;
  const head = `${messages.length} message${messages.length === 1 ? "" : "s"} (cursor ${cursor}${more}):`;
  return [head, ...messages.map((message) => JSON.stringify(message))].join("\n");
}
