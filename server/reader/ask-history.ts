/**
 * Asks sent by reference (protocol/reader.ts, `AskBySend`): the reader names the
 * thread's history by its number of turns and digest instead of carrying it, and the
 * server fills it in from the thread's record before the ask is queued, so the agent
 * always gets a plain `AskData` and keeps no state.
 *
 * Invariants: the history filled in is exactly the first `turns` recorded messages of
 * the thread, and only when their digest is the one the reader computed from the
 * turns it shows; anything else is refused (`HISTORY_MISMATCH`) and nothing is queued.
 * The filled ask is fitted to the message limit by the same rule the reader uses.
 */
import { z } from "zod";
import { CallerError } from "../../core/errors.js";
import { InvalidDataError, type JsonValue } from "../../core/json.js";
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { fitAsk } from "../../protocol/ask-budget.js";
import { historyDigest } from "../../protocol/history-digest.js";
import type { AskData } from "../../protocol/reader.js";
import type { ChannelStore } from "../../store/store.js";
import { readThreads } from "./reader-state.js";

/** Thrown when an ask's `history_ref` names turns the thread's record does not hold. */
export class HistoryMismatchError extends CallerError {
  override readonly name = "HistoryMismatchError";
  override readonly code = "HISTORY_MISMATCH";
  constructor(threadId: string, detail: string) {
    super(`the history this ask names is not the one recorded for thread ${threadId} (${detail}); send the ask with its whole history`);
  }
}

/** An ask by reference, as the edge accepts it. */
const askBySendSchema = z.object({
  thread_id: z.string().min(1).max(100),
  quote: z.string(),
  paragraph: z.string(),
  question: z.string(),
  history: z.array(z.never()).max(0),
  history_ref: z.object({ turns: z.number().int().min(1).max(100_000), digest: z.string().regex(/^[0-9a-f]{14}$/) }),
});

/**
 * `data` of an `ask` whose history is named by `history_ref`, with the history filled
 * in from the record of the thread on `channelId` and fitted to `maxBytes`; any other
 * event or data is returned as it is.
 * @throws InvalidDataError when `history_ref` is there but the ask is malformed;
 *   HistoryMismatchError when the record does not hold the history named.
 */
export async function fillAskHistory(
  store: ChannelStore,
  channelId: string,
  event: string,
  data: JsonValue | undefined,
  maxBytes: number,
): Promise<JsonValue | undefined> {
  if (event !== "ask" || typeof data !== "object" || data === null || Array.isArray(data) || !Object.hasOwn(data, "history_ref")) return data;
  const parsed = askBySendSchema.safeParse(data);
  if (!parsed.success) throw new InvalidDataError(`an ask with history_ref: ${parsed.error.issues[0]?.message ?? "bad shape"}`);
  const { history_ref: ref, thread_id, quote, paragraph, question } = parsed.data;
  const { threads } = await readThreads(store, channelId);
  const messages = threads.find((thread) => thread.thread_id === thread_id)?.messages ?? [];
  if (messages.length < ref.turns) throw new HistoryMismatchError(thread_id, `${messages.length} of ${ref.turns} turns recorded`);
  const history = messages.slice(0, ref.turns).map(({ role, text }) => ({ role, text }));
  if (historyDigest(history) !== ref.digest) throw new HistoryMismatchError(thread_id, "the digest differs");
  const fitted = fitAsk({ thread_id, quote, paragraph, question, history } satisfies AskData, maxBytes);
  // The question fitted alone when the reader sent it; a history can always be left out.
  if (!fitted.fits) throw new HistoryMismatchError(thread_id, "the question no longer fits");
  return fitted.data as unknown as JsonValue;
}

/** The largest message `store` accepts: its own `limits` when it has them (the file store does), else the default. */
export function storeMaxMessageBytes(store: ChannelStore): number {
  return (store as { limits?: Partial<Limits> }).limits?.maxMessageBytes ?? DEFAULT_LIMITS.maxMessageBytes;
}
