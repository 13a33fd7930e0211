/**
 * `watch_agent_messages`: what the remote watcher (`backchannel watch --url`) calls to
 * learn that the agent's queue has mail. Unlike `poll_agent_messages` it takes nothing
 * and acknowledges nothing: it peeks, and waits for a change when nothing newer than
 * `after_seq` waits. It does not tell the server's awareness that the model uses the
 * channel (the watcher is not the model).
 *
 * It is hidden from the model (`visibility: ["app"]`), so it costs no context; an app
 * that calls it only reads its own channel's agent queue, which changes nothing.
 * One wait lasts at most MAX_REMOTE_WAIT_MS (remote hosts end a request near 60 s):
 * the caller loops.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { MAX_REMOTE_WAIT_MS } from "../../core/limits.js";
import { changes } from "../../store/changes.js";
import { channelTitle } from "../../store/channel-title.js";
import { afterSeqIn, NO_EPOCH } from "../../protocol/epoch.js";
import type { ChannelReader, QueueSnapshot } from "../../store/store.js";
import { registerAppOnlyTool } from "./app-only.js";
import { guarded, toolResult } from "./results.js";
import { channelIdSchema, compactSchema, epochSchema, messageSchema, waitSchema } from "./schemas.js";
import type { WaitSlots } from "./wait-slots.js";

/** The tool's name. */
export const WATCH_TOOL = "watch_agent_messages";

/** Re-read this often while waiting when the store sent no change event (the file store on a file system without events). */
const FALLBACK_MS = 1000;

/** The input of `watch_agent_messages`. */
export const watchInput = z.object({
  channel_id: channelIdSchema,
  after_seq: z
    .number()
    .int()
    .min(0)
    .max(2 ** 50)
    .optional()
    .describe("Return only messages with a higher seq. Default 0."),
  epoch: epochSchema.optional().describe("The epoch after_seq came from: when the queue's is another, every waiting message is returned."),
  wait_ms: waitSchema(MAX_REMOTE_WAIT_MS).optional().describe(`Wait up to this long for one. Default 0, at most ${MAX_REMOTE_WAIT_MS}.`),
  with_title: z
    .boolean()
    .optional()
    .describe("Also return the channel's title (its reader's document's or app's), when it has one. Ask once: it reads the channel's state."),
});

/** The output of `watch_agent_messages`. */
export const watchOutput = z.object({
  messages: z.array(messageSchema).describe("The messages waiting in the agent queue with seq > after_seq, left in place."),
  epoch: z.string().describe("The agent queue's epoch: pass it with after_seq next time."),
  title: z.string().optional().describe("The channel's title, with with_title, when it has one."),
  exists: z.boolean().describe("Whether the channel exists (an app or the agent opened it or wrote to it): a watcher given a mistyped id ends."),
});

/** Registers `watch_agent_messages` on `server`, reading `reader`; a call with `wait_ms` takes one of `waitSlots` while it runs. */
export function registerWatchTools(server: McpServer, reader: ChannelReader, waitSlots: WaitSlots): void {
  registerAppOnlyTool(
    server,
    WATCH_TOOL,
    {
      title: "Watch the agent's queue",
      description:
        "For backchannel watch --url: wait up to wait_ms until the agent queue holds messages with seq > after_seq, and list them without taking them.",
      inputSchema: compactSchema(watchInput),
      outputSchema: compactSchema(watchOutput),
      annotations: { readOnlyHint: true },
    },
    guarded(async ({ channel_id, after_seq = 0, epoch, wait_ms = 0, with_title = false }, ctx) => {
      const giveBack = wait_ms > 0 ? waitSlots.take() : () => undefined;
      try {
        const { messages, epoch: current } = await waitForMessages(reader, channel_id, { seq: after_seq, epoch }, wait_ms, ctx.mcpReq.signal);
        const text =
          messages.length === 0
            ? `No new message on ${channel_id}.`
            : `${messages.length} waiting on ${channel_id} (last seq ${messages.at(-1)!.seq}).`;
        const title = with_title ? await channelTitle(reader, channel_id) : undefined;
        const exists = messages.length > 0 || (await reader.hasChannel(channel_id));
        return toolResult(title === undefined ? { messages, epoch: current, exists } : { messages, epoch: current, title, exists }, text);
      } finally {
        giveBack();
      }
    }),
  );
}

/**
 * Peeks at the agent queue until it holds a message above `after` (every message when
 * the queue's epoch is not `after.epoch`), `waitMs` passes or `signal` aborts.
 * @returns those messages (none at the timeout) and the queue's epoch.
 */
async function waitForMessages(
  reader: ChannelReader,
  channelId: string,
  after: { seq: number; epoch: string | undefined },
  waitMs: number,
  signal: AbortSignal,
): Promise<QueueSnapshot> {
  let fresh: QueueSnapshot = { messages: [], epoch: after.epoch ?? NO_EPOCH };
  for await (const _wake of changes(reader.watchQueue(channelId, "agent"), { fallbackMs: FALLBACK_MS, deadline: Date.now() + waitMs, signal })) {
    const { messages, epoch } = await reader.snapshot(channelId, "agent");
    fresh = { messages: messages.filter((message) => message.seq > afterSeqIn(epoch, after)), epoch };
    if (fresh.messages.length > 0) break;
  }
  return fresh;
}
