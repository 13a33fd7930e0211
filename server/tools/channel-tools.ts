/**
 * The four channel tools (docs/ARCHITECTURE.md, "Channels"): the agent writes to the app with `notify_ui` and
 * reads from it with `poll_agent_messages`; the app does the mirror image with the
 * app-only `notify_agent` and `poll_ui_messages`. Each handler validates (the schema),
 * calls the store, and shapes the result. The agent's two tools also tell the
 * server's awareness which channels the model uses; a `poll_ui_messages` result carries
 * the wall of the channel's session, and a wall change ends its wait.
 */
import type { CallToolResult, McpServer, ServerContext } from "@modelcontextprotocol/server";
import type { QueueName } from "../../core/paths.js";
import type { JsonValue } from "../../protocol/message.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import type { ChannelStore, PollResult } from "../../store/store.js";
import type { Wall } from "../../protocol/wall.js";
import { Awareness } from "../awareness/awareness.js";
import { fillAskHistory, storeMaxMessageBytes } from "../reader/ask-history.js";
import { recordAnswer } from "../reader/reader-state.js";
import { progressTicker } from "./progress.js";
import type { WaitingPolls } from "./waiting-polls.js";
import type { WaitSlots } from "./wait-slots.js";
import { registerAppOnlyTool } from "./app-only.js";
import { toolError, toolResult } from "./results.js";
import { compactSchema, notifyInput, notifyOutput, notifyUiInput, pollInput, pollOutput, uiPollOutput } from "./schemas.js";
import { DEFAULT_LIMITS } from "../../core/limits.js";

/** Options of {@link registerChannelTools}. */
export interface ChannelToolOptions {
  /** Longest `wait_ms` of `poll_agent_messages`. Default 300,000. */
  maxAgentWaitMs?: number;
  /** Longest `wait_ms` of `poll_ui_messages`. Default 30,000. */
  maxUiWaitMs?: number;
  /** How often a waiting `poll_agent_messages` sends `notifications/progress` (when the call has a progress token). Default 5,000. */
  progressIntervalMs?: number;
  /**
   * Where the app's waiting polls put themselves, so that a `notifications/cancelled`
   * served by another server instance of this process ends them (stateless HTTP passes
   * one). Default: none (a cancel reaches its own connection's poll).
   */
  waitingPolls?: WaitingPolls;
  /**
   * The slots a poll with `wait_ms` takes while it runs (./wait-slots.ts): the caller's,
   * inside the process's. Default: none (no cap; `createServer` always passes one).
   */
  waitSlots?: WaitSlots;
  /**
   * What tells the agent and the human that something waits. Pass the server's one
   * (`createServer` does) to every `register…Tools` call on the same server. Default:
   * one of these tools' own, for this process's host session.
   */
  awareness?: Awareness;
}

/** `poll_agent_messages`'s description; what waits is added to it (see ../awareness/waiting-description.ts). */
const POLL_AGENT_DESCRIPTION = "Read what the app sent on a channel; clears it unless after (a cursor) is given. wait_ms: wait for a message.";

/**
 * Registers `notify_ui`, `poll_agent_messages` (model-visible), `poll_ui_messages` and
 * `notify_agent` (app-only) on `server`, backed by `store`.
 */
export function registerChannelTools(server: McpServer, store: ChannelStore, options: ChannelToolOptions = {}): void {
  const awareness = options.awareness ?? new Awareness(server, store);
  const maxAgentWaitMs = options.maxAgentWaitMs ?? DEFAULT_LIMITS.maxAgentWaitMs;
  const maxUiWaitMs = options.maxUiWaitMs ?? DEFAULT_LIMITS.maxUiWaitMs;
  const maxMessageBytes = storeMaxMessageBytes(store);

  server.registerTool(
    "notify_ui",
    {
      title: "Send to the app",
      description: "Send an event to the app on a channel (reader: answer {thread_id, text}, hello, status {text}).",
      inputSchema: compactSchema(notifyUiInput),
      outputSchema: compactSchema(notifyOutput),
      // Loaded, not deferred behind tool search: a woken agent answers in one call.
      _meta: { "anthropic/alwaysLoad": true },
    },
    async ({ channel_id, event, data, ack, ack_epoch }) => {
      // A channel made by this message was opened by no app in this store (a mistyped id, or an app on another store).
      const known = await store.hasChannel(channel_id).catch(() => true);
      const { result, seq } = await notify(store, channel_id, "ui", event, data, known ? undefined : unopenedNote(channel_id));
      if (seq === undefined) return result;
      await awareness.useChannel(channel_id, "channel");
      // A reader's answer goes into its thread here, so the reader need not send it back
      // through the host to keep it (docs/reader.md, "How it works").
      const kept = await keepAnswer(store, channel_id, event, data, seq);
      if (ack === undefined && kept === "") return result;
      const sent = result.content[0]?.type === "text" ? result.content[0].text : "";
      const cleared = ack === undefined ? "" : ` ${await acknowledge(store, awareness, channel_id, ack, ack_epoch)}`;
      return { ...result, content: [{ type: "text" as const, text: `${sent}${kept}${cleared}` }] };
    },
  );

  const pollAgent = server.registerTool(
    "poll_agent_messages",
    {
      title: "Read from the app",
      description: POLL_AGENT_DESCRIPTION,
      inputSchema: compactSchema(pollInput(maxAgentWaitMs)),
      outputSchema: compactSchema(pollOutput),
      // Claude Code defers MCP tools behind tool search, and a deferred tool may show a
      // stale description: this one's description is how the model learns what waits.
      _meta: { "anthropic/alwaysLoad": true },
    },
    async ({ channel_id, after, epoch, wait_ms }, ctx) => {
      await awareness.useChannel(channel_id, "channel");
      const result = await poll(store, "agent", {
        channelId: channel_id,
        after,
        epoch,
        waitMs: wait_ms,
        ctx,
        progressIntervalMs: options.progressIntervalMs,
        waitSlots: options.waitSlots,
      });
      // The poll took what it returned: the description drops it now, not at the next file event.
      await awareness.refresh(channel_id);
      return result;
    },
  );
  awareness.describeWaiting(pollAgent, POLL_AGENT_DESCRIPTION);

  registerAppOnlyTool(
    server,
    "poll_ui_messages",
    {
      title: "Read from the agent (app only)",
      description: "App only: read what the agent sent on a channel, after a cursor, waiting up to wait_ms.",
      inputSchema: compactSchema(pollInput(maxUiWaitMs)),
      outputSchema: compactSchema(uiPollOutput),
    },
    ({ channel_id, after, epoch, wait_ms }, ctx) =>
      pollUi(store, awareness, { channelId: channel_id, after, epoch, waitMs: wait_ms, ctx, waitSlots: options.waitSlots }, options.waitingPolls),
  );

  registerAppOnlyTool(
    server,
    "notify_agent",
    {
      title: "Send to the agent (app only)",
      description: "App only: send an event to the agent on a channel.",
      inputSchema: compactSchema(notifyInput),
      outputSchema: compactSchema(notifyOutput),
    },
    async ({ channel_id, event, data }) => {
      let filled: JsonValue | undefined;
      try {
        // The reader's asks may name the thread's history instead of carrying it (server/reader/ask-history.ts).
        filled = await fillAskHistory(store, channel_id, event, data, maxMessageBytes);
      } catch (error) {
        return toolError(error);
      }
      return (await notify(store, channel_id, "agent", event, filled)).result;
    },
  );
}

/** What `notify_ui` says of a channel that no app opened in this store: its message waits unseen. */
function unopenedNote(channelId: string): string {
  return (
    `No app has channel ${channelId} open in this store: nothing shows this message until one opens it. ` +
    "Check the channel id; an app opened through another server shows it only when that server uses the same store (data directory or Redis)."
  );
}

/** Queues one message: the tool's result (with `note` when given), and the message's seq when it was queued. */
async function notify(
  store: ChannelStore,
  channelId: string,
  queue: QueueName,
  event: string,
  data: JsonValue | undefined,
  note?: string,
): Promise<{ result: CallToolResult; seq?: number }> {
  try {
    const { seq, pending } = await store.append(channelId, queue, event, data);
    const sent = `Sent ${event} as seq ${seq} (${pending} waiting).`;
    return { result: toolResult(note ? { seq, pending, note } : { seq, pending }, note ? `${sent} ${note}` : sent), seq };
  } catch (error) {
    return { result: toolError(error) };
  }
}

/**
 * Records a reader's `answer` ({thread_id, text}, queued as `seq`) in its thread
 * (server/reader/reader-state.ts, `recordAnswer`). The answer is sent whatever happens here.
 * @returns "" when there was nothing to keep or it was kept; else the sentence that says
 *   it was not kept and why (a re-rendered reader then lacks it).
 */
async function keepAnswer(store: ChannelStore, channelId: string, event: string, data: JsonValue | undefined, seq: number): Promise<string> {
  if (event !== "answer" || typeof data !== "object" || data === null || Array.isArray(data)) return "";
  const { thread_id: threadId, text } = data;
  if (typeof threadId !== "string" || typeof text !== "string") return "";
  try {
    await recordAnswer(store, channelId, { threadId, seq, text });
    return "";
  } catch (error) {
    const failed = toolError(error).content[0];
    return ` The reader's thread did not keep it: ${failed?.type === "text" ? failed.text : "unknown error"}`;
  }
}

/**
 * Clears the agent queue of `channelId` up to `ack` (of epoch `epoch`, when given: an
 * ack of a queue that started again since clears nothing), after the answer was sent: a
 * message is gone only once it is answered, as the answer is in the app's queue first.
 * @returns the sentence that says what was cleared, or why nothing was (the messages
 *   then still wait; the answer stays sent).
 */
async function acknowledge(store: ChannelStore, awareness: Awareness, channelId: string, ack: number, epoch: string | undefined): Promise<string> {
  try {
    const { pending, epoch: current } = await store.poll(channelId, "agent", { after: ack, epoch });
    if (epoch !== undefined && epoch !== current)
      return `Cleared nothing: the app's queue started again since #${ack} was read (${pending} waiting; read them with poll_agent_messages).`;
    await awareness.refresh(channelId);
    return `Cleared the app's messages up to #${ack} (${pending} still waiting).`;
  } catch (error) {
    const failed = toolError(error).content[0];
    return `The app's messages were not cleared: ${failed?.type === "text" ? failed.text : "unknown error"}`;
  }
}

/** One poll as a tool handler received it. */
interface PollCall {
  channelId: string;
  after: number | undefined;
  /** The epoch `after` came from, when the caller gave it. */
  epoch: string | undefined;
  waitMs: number | undefined;
  ctx: ServerContext;
  /** How often a waiting poll sends progress; see {@link ChannelToolOptions.progressIntervalMs}. */
  progressIntervalMs?: number | undefined;
  /** See {@link ChannelToolOptions.waitSlots}. */
  waitSlots?: WaitSlots | undefined;
}

/**
 * A slot of `call.waitSlots` when the call may wait (`wait_ms` > 0).
 * @returns the function that gives it back (nothing to give back for a call that does not wait).
 * @throws WaitLimitError when no slot is free.
 */
function takeWaitSlot(call: PollCall): () => void {
  return (call.waitMs ?? 0) > 0 && call.waitSlots ? call.waitSlots.take() : () => undefined;
}

async function poll(store: ChannelStore, queue: QueueName, call: PollCall) {
  let giveBack = () => {};
  try {
    giveBack = takeWaitSlot(call);
    const result = await waitingPoll(store, queue, call, call.ctx.mcpReq.signal);
    return toolResult({ ...result }, describePoll(result));
  } catch (error) {
    return toolError(error);
  } finally {
    giveBack();
  }
}

/**
 * `poll_ui_messages`: a poll of the `ui` queue that also returns the wall of the
 * channel's session. A wall posted, cleared or expired while the poll waits ends the
 * wait, so an open reader shows it at once. It never sends progress.
 */
async function pollUi(store: ChannelStore, awareness: Awareness, call: PollCall, waitingPolls: WaitingPolls | undefined) {
  let giveBack: () => void;
  try {
    giveBack = takeWaitSlot(call);
  } catch (error) {
    return toolError(error);
  }
  try {
    return await waitingUiPoll(store, awareness, call, waitingPolls);
  } finally {
    giveBack();
  }
}

async function waitingUiPoll(store: ChannelStore, awareness: Awareness, call: PollCall, waitingPolls: WaitingPolls | undefined) {
  const stop = new AbortController();
  const cancel = () => stop.abort();
  const callSignal = call.ctx.mcpReq.signal;
  callSignal.addEventListener("abort", cancel, { once: true });
  const unlist = waitingPolls?.add(call.ctx.mcpReq.id, cancel);
  try {
    const { session } = awareness;
    const key = await session.sessionOf(call.channelId);
    if (key !== null && (call.waitMs ?? 0) > 0) await session.followWall(key, stop.signal, cancel);
    // No progress here, even when the call carries a progress token (ext-apps' App puts
    // one on every call): the app does not need it, and hosts log every notification.
    const result = await store.poll(call.channelId, "ui", { after: call.after, epoch: call.epoch, waitMs: call.waitMs, signal: stop.signal });
    const wall = key === null ? null : await session.wallOf(key);
    return toolResult({ ...result, wall }, describePoll(result) + describeWall(wall));
  } catch (error) {
    return toolError(error);
  } finally {
    unlist?.();
    stop.abort();
    callSignal.removeEventListener("abort", cancel);
  }
}

/** A store poll that sends progress while it waits (when the call has a progress token) and ends when `signal` aborts. */
async function waitingPoll(store: ChannelStore, queue: QueueName, call: PollCall, signal: AbortSignal): Promise<PollResult> {
  const { channelId, after, epoch, waitMs, ctx } = call;
  const reader = queue === "agent" ? "the app" : "the agent";
  const progress = progressTicker(ctx, waitMs ?? 0, (seconds) => `waiting for ${reader} on ${channelId} (${seconds} s)`, call.progressIntervalMs);
  try {
    return await store.poll(channelId, queue, { after, epoch, waitMs, signal, onWaiting: progress.start });
  } finally {
    progress.stop();
  }
}

function describeWall(wall: Wall | null): string {
  return wall ? `\nWall until ${wall.until}: ${wall.text}` : "";
}

/** The text of a poll result: a count line (with the cursor and its epoch), then one JSON line per message (the data the model needs). */
function describePoll({ messages, cursor, pending, epoch }: PollResult): string {
  const more = pending > 0 ? `; ${pending} more waiting, poll again` : "";
  const position = epoch === NO_EPOCH ? `cursor ${cursor}` : `cursor ${cursor}, epoch ${epoch}`;
  if (messages.length === 0) return `No messages (${position}${more}).`;
  const head = `${messages.length} message${messages.length === 1 ? "" : "s"} (${position}${more}):`;
  return [head, ...messages.map((message) => JSON.stringify(message))].join("\n");
}
