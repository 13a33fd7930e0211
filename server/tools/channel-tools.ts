/**
 * The four channel tools (docs/ARCHITECTURE.md, "Channels"): the agent writes to the app with `notify_ui` and
 * reads from it with `poll_agent_messages`; the app does the mirror image with the
 * app-only `notify_agent` and `poll_ui_messages`. Each handler validates (the schema),
 * calls the store, and shapes the result. The agent's two tools also tell the
 * server's awareness which channels the model uses; a `poll_ui_messages` result carries
 * the wall of the channel's session, and a wall change ends its wait.
 */
import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
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
import { attempt, describeError, guarded, toolResult } from "./results.js";
import { compactSchema, notifyInput, notifyOutput, notifyUiInput, pollInput, pollOutput, uiPollInput, uiPollOutput } from "./schemas.js";
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
    guarded(async ({ channel_id, event, data, ack, ack_epoch }) => {
      // A channel made by this message was opened by no app in this store (a mistyped id, or an app on another store).
      const note = (await store.hasChannel(channel_id)) ? undefined : unopenedNote(channel_id);
      const { seq, pending } = await store.append(channel_id, "ui", event, data);
      await awareness.useChannel(channel_id, "channel");
      // A reader's answer goes into its thread here, so the reader need not send it back
      // through the host to keep it (docs/reader.md, "How it works").
      const kept = await keepAnswer(store, channel_id, event, data, seq);
      const cleared = ack === undefined ? "" : ` ${await acknowledge(store, awareness, channel_id, ack, ack_epoch)}`;
      return sentResult(event, seq, pending, note, `${kept}${cleared}`);
    }),
  );

  const pollAgentTool = server.registerTool(
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
    guarded(async ({ channel_id, after, epoch, wait_ms }, ctx) => {
      await awareness.useChannel(channel_id, "channel");
      const call = { channelId: channel_id, after, epoch, waitMs: wait_ms, ctx, waitSlots: options.waitSlots };
      const result = await pollAgent(store, call, options.progressIntervalMs);
      // The poll took what it returned: the description drops it now, not at the next file event.
      await awareness.refresh(channel_id);
      return toolResult({ ...result }, describePoll(result));
    }),
  );
  awareness.describeWaiting(pollAgentTool, POLL_AGENT_DESCRIPTION);

  registerAppOnlyTool(
    server,
    "poll_ui_messages",
    {
      title: "Read from the agent (app only)",
      description:
        "App only: read what the agent sent on a channel, after a cursor, waiting up to wait_ms. Pass reader so that other readers of the channel keep their messages.",
      inputSchema: compactSchema(uiPollInput(maxUiWaitMs)),
      outputSchema: compactSchema(uiPollOutput),
    },
    guarded(({ channel_id, after, epoch, reader, wait_ms }, ctx) =>
      pollUi(
        store,
        awareness,
        { channelId: channel_id, after, epoch, reader, waitMs: wait_ms, ctx, waitSlots: options.waitSlots },
        options.waitingPolls,
      ),
    ),
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
    guarded(async ({ channel_id, event, data }) => {
      // The reader's asks may name the thread's history instead of carrying it (server/reader/ask-history.ts).
      const filled = await fillAskHistory(store, channel_id, event, data, maxMessageBytes);
      const { seq, pending } = await store.append(channel_id, "agent", event, filled);
      return sentResult(event, seq, pending);
    }),
  );
}

/** What `notify_ui` says of a channel that no app opened in this store: its message waits unseen. */
function unopenedNote(channelId: string): string {
  return (
    `No app has channel ${channelId} open in this store: nothing shows this message until one opens it. ` +
    "Check the channel id; an app opened through another server shows it only when that server uses the same store (data directory or Redis)."
  );
}

/** The result of a queued message: its seq and what waits, with `note` (in both shapes) and `more` (text only) when given. */
function sentResult(event: string, seq: number, pending: number, note?: string, more = "") {
  const sent = `Sent ${event} as seq ${seq} (${pending} waiting).${note ? ` ${note}` : ""}${more}`;
  return toolResult(note ? { seq, pending, note } : { seq, pending }, sent);
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
  return attempt(
    async () => {
      await recordAnswer(store, channelId, { threadId, seq, text });
      return "";
    },
    (error) => ` The reader's thread did not keep it: ${describeError(error).message}`,
  );
}

/**
 * Clears the agent queue of `channelId` up to `ack` (of epoch `epoch`, when given: an
 * ack of a queue that started again since clears nothing), after the answer was sent: a
 * message is gone only once it is answered, as the answer is in the app's queue first.
 * @returns the sentence that says what was cleared, or why nothing was (the messages
 *   then still wait; the answer stays sent).
 */
async function acknowledge(store: ChannelStore, awareness: Awareness, channelId: string, ack: number, epoch: string | undefined): Promise<string> {
  return attempt(
    async () => {
      const { pending, epoch: current } = await store.poll(channelId, "agent", { after: ack, epoch });
      if (epoch !== undefined && epoch !== current)
        return `Cleared nothing: the app's queue started again since #${ack} was read (${pending} waiting; read them with poll_agent_messages).`;
      await awareness.refresh(channelId);
      return `Cleared the app's messages up to #${ack} (${pending} still waiting).`;
    },
    (error) => `The app's messages were not cleared: ${describeError(error).message}`,
  );
}

/** One poll as a tool handler received it. */
interface PollCall {
  channelId: string;
  after: number | undefined;
  /** The epoch `after` came from, when the caller gave it. */
  epoch: string | undefined;
  /** Who reads (store/readers.ts); `undefined`: the default reader. */
  reader?: string | undefined;
  waitMs: number | undefined;
  ctx: ServerContext;
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

/**
 * `poll_agent_messages`: a poll of the `agent` queue that sends progress while it waits
 * (when the call has a progress token, every `progressIntervalMs`) and ends when the call is cancelled.
 */
async function pollAgent(store: ChannelStore, call: PollCall, progressIntervalMs: number | undefined): Promise<PollResult> {
  const giveBack = takeWaitSlot(call);
  const { channelId, after, epoch, waitMs, ctx } = call;
  const progress = progressTicker(ctx, waitMs ?? 0, (seconds) => `waiting for the app on ${channelId} (${seconds} s)`, progressIntervalMs);
  try {
    return await store.poll(channelId, "agent", { after, epoch, waitMs, signal: ctx.mcpReq.signal, onWaiting: progress.start });
  } finally {
    progress.stop();
    giveBack();
  }
}

/**
 * `poll_ui_messages`: a poll of the `ui` queue that also returns the wall of the
 * channel's session. A wall posted, cleared or expired while the poll waits ends the
 * wait, so an open reader shows it at once. It never sends progress.
 */
async function pollUi(store: ChannelStore, awareness: Awareness, call: PollCall, waitingPolls: WaitingPolls | undefined) {
  const giveBack = takeWaitSlot(call);
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
    const { after, epoch, reader, waitMs } = call;
    const result = await store.poll(call.channelId, "ui", { after, epoch, reader, waitMs, signal: stop.signal });
    const wall = key === null ? null : await session.wallOf(key);
    const missed = result.missed ? "\nMessages after your cursor were deleted before you read them: reload your state." : "";
    return toolResult({ ...result, wall }, describePoll(result) + describeWall(wall) + missed);
  } finally {
    unlist?.();
    stop.abort();
    callSignal.removeEventListener("abort", cancel);
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
