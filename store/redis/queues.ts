/**
 * The queue operations of the Redis store, each one script (./scripts.ts) or one read:
 * append, read with a cursor, read and clear, peek. Messages are checked before they
 * get here (../validate.ts), so that both stores refuse the same ones.
 */
import type { Limits } from "../../core/limits.js";
import type { QueueName } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import { QueueFullError } from "../errors.js";
import type { AppendResult, PollResult } from "../store.js";
import type { RedisConnection } from "./connection.js";
import { type ChannelKeys, type KeySpace, keyList } from "./keys.js";

/** What a channel script needs besides its keys: the TTL, and how often a read marks the channel as used. */
export interface Upkeep {
  ttlMs: number;
  touchEveryMs: number;
}

/** How often a read that changes nothing marks its channel as used, at most (less for a short TTL). */
const TOUCH_EVERY_MS = 60_000;

/** The upkeep arguments for `limits`. */
export function upkeepOf(limits: Pick<Limits, "channelTtlMs">): Upkeep {
  return { ttlMs: limits.channelTtlMs, touchEveryMs: Math.max(1, Math.min(TOUCH_EVERY_MS, Math.floor(limits.channelTtlMs / 4))) };
}

/** One queue of one channel, with what its scripts need. */
export interface QueueContext {
  connection: RedisConnection;
  channelId: string;
  queue: QueueName;
  keys: ChannelKeys;
  /** The pub/sub channel that says this queue changed. */
  wake: string;
  limits: Readonly<Limits>;
  upkeep: Upkeep;
}

/**
 * The context of a queue.
 * @throws InvalidChannelIdError.
 */
export function queueContext(
  connection: RedisConnection,
  space: KeySpace,
  channelId: string,
  queue: QueueName,
  limits: Readonly<Limits>,
  upkeep: Upkeep,
): QueueContext {
  return { connection, channelId, queue, keys: space.channel(channelId), wake: space.queueWake(channelId, queue), limits, upkeep };
}

/**
 * Appends a message whose data is already checked and encoded (`json`).
 * @throws QueueFullError (nothing changed), StoreUnavailableError, StoreRefusedError.
 */
export async function appendMessage(context: QueueContext, event: string, json: string): Promise<AppendResult> {
  const { keys, queue, limits, upkeep } = context;
  const reply = await context.connection.run((client) =>
    client.bcAppend(keyList(keys), [
      upkeep.ttlMs,
      upkeep.touchEveryMs,
      queue,
      event,
      json,
      new Date().toISOString(),
      limits.maxQueueMessages,
      limits.maxQueueBytes,
      context.wake,
    ]),
  );
  const [status, first, second] = asArray(reply);
  if (status === "full") {
    const limit = first === "bytes" ? "bytes" : "messages";
    throw new QueueFullError(context.channelId, queue, limit, limit === "bytes" ? limits.maxQueueBytes : limits.maxQueueMessages);
  }
  if (status !== "ok") throw unexpected(reply);
  return { seq: asNumber(first), pending: asNumber(second) };
}

/**
 * Acknowledges every message with `seq <= after`, then returns a batch of those after it.
 * A cursor above the last seq handed out acknowledges nothing, moves no seq, and gets
 * the queue from its start (its cursor: the last seq returned, else the last handed out).
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function readAfter(context: QueueContext, after: number): Promise<PollResult> {
  const { keys, queue, limits, upkeep } = context;
  const reply = await context.connection.run((client) =>
    client.bcReadAfter(keyList(keys), [upkeep.ttlMs, upkeep.touchEveryMs, queue, after, limits.maxBatchBytes, context.wake]),
  );
  return pollResult(reply);
}

/**
 * Returns a batch of the waiting messages and deletes it (at-most-once).
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function drain(context: QueueContext): Promise<PollResult> {
  const { keys, queue, limits, upkeep } = context;
  const reply = await context.connection.run((client) =>
    client.bcDrain(keyList(keys), [upkeep.ttlMs, upkeep.touchEveryMs, queue, limits.maxBatchBytes, context.wake]),
  );
  return pollResult(reply);
}

/**
 * The messages waiting in a queue, changing nothing.
 * @throws InvalidChannelIdError, StoreUnavailableError, StoreRefusedError.
 */
export async function peekQueue(connection: RedisConnection, space: KeySpace, channelId: string, queue: QueueName): Promise<QueueMessage[]> {
  const stream = space.channel(channelId)[queue];
  const entries = await connection.run((client) => client.xRange(stream, "-", "+"));
  return (entries ?? []).map((entry) => {
    const message = entry.message as Record<string, string | undefined>;
    return toMessage(Number.parseInt(entry.id, 10), message.event, message.data, message.ts);
  });
}

/** Whether channel `channelId` of `space` has keys: its meta (made by its first write) or its state documents. */
export async function channelExists(connection: RedisConnection, space: KeySpace, channelId: string): Promise<boolean> {
  const keys = space.channel(channelId);
  return (await connection.run((client) => client.exists([keys.meta, keys.state]))) > 0;
}

/** A poll script's reply, `{cursor, pending, seq, event, data, ts, …}`. */
function pollResult(reply: unknown): PollResult {
  const values = asArray(reply);
  const messages: QueueMessage[] = [];
  for (let index = 2; index + 3 < values.length; index += 4) {
    messages.push(toMessage(asNumber(values[index]), values[index + 1], values[index + 2], values[index + 3]));
  }
  return { messages, cursor: asNumber(values[0]), pending: asNumber(values[1]) };
}

/** A message from its stored fields. Data that does not parse (written by hand) is kept as its text. */
function toMessage(seq: number, event: unknown, data: unknown, ts: unknown): QueueMessage {
  const text = String(data ?? "null");
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    value = text;
  }
  return { seq, event: String(event ?? ""), data: value, ts: String(ts ?? "") };
}

function asArray(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw unexpected(reply);
  return reply;
}

/** A seq, cursor or count: decimal text from the scripts (see ./scripts.ts), or a number. */
function asNumber(value: unknown): number {
  const number = typeof value === "number" ? value : typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number)) throw unexpected(value);
  return number;
}

function unexpected(reply: unknown): Error {
  return new Error(`unexpected reply from a backchannel script: ${JSON.stringify(reply)?.slice(0, 200)}`);
}
