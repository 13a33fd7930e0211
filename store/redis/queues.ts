/**
 * The queue operations of the Redis store, each one script (./scripts.ts) or one read:
 * append, read with a cursor, read and clear, peek. Messages are checked before they
 * get here (../validate.ts), so that both stores refuse the same ones.
 */
import type { Limits } from "../../core/limits.js";
import type { QueueName } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import { QueueFullError } from "../errors.js";
import type { AppendResult, PollResult, QueueSnapshot } from "../store.js";
import { mintEpoch } from "../validate.js";
import { DEFAULT_READER, MAX_READERS, READER_LEASE_MS, READER_RENEW_MS } from "../readers.js";
import { isEpoch, NO_EPOCH } from "../../protocol/epoch.js";
import type { RedisConnection } from "./connection.js";
import { type ChannelKeys, type KeySpace, keyList } from "./keys.js";
import { scriptCommand } from "./scripts.js";

/** What a channel script needs besides its keys: the TTL, and how often a read marks the channel as used. */
export interface Upkeep {
  ttlMs: number;
  touchEveryMs: number;
}

/** What the read script takes for "no epoch given": the cursor is taken as it is (no epoch is `*`). */
const ANY_EPOCH = "*";

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
  /** Called when a script's wake-up was refused (an ACL user without the channel's rights): the change stands, but no waiter heard of it. */
  wakeRefused: () => void;
  /** The clock readers are seen by (../readers.ts); Redis's own, shifted by how far this one is from `Date.now()`. */
  now: () => number;
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
  wakeRefused: () => void,
  now: () => number,
): QueueContext {
  return { connection, channelId, queue, keys: space.channel(channelId), wake: space.queueWake(channelId, queue), limits, upkeep, wakeRefused, now };
}

/**
 * Appends a message whose data is already checked and encoded (`json`).
 * @throws QueueFullError (nothing changed), StoreUnavailableError, StoreRefusedError.
 */
export async function appendMessage(context: QueueContext, event: string, json: string): Promise<AppendResult> {
  const { keys, queue, limits, upkeep } = context;
  const command = scriptCommand("bcAppend", keyList(keys), [
    upkeep.ttlMs,
    upkeep.touchEveryMs,
    queue,
    event,
    json,
    new Date().toISOString(),
    limits.maxQueueMessages,
    limits.maxQueueBytes,
    context.wake,
    mintEpoch(),
  ]);
  const reply = await context.connection.change({
    ...command,
    route: keys.meta,
    // A full queue changed nothing.
    confirm: (value) => Array.isArray(value) && value[0] === "ok",
    describe: (value) => `the append of seq ${String((value as unknown[])[1])} to the ${queue} queue of channel ${context.channelId}`,
  });
  const [status, first, second, , woke] = asArray(reply);
  if (status === "full") {
    const limit = first === "bytes" ? "bytes" : "messages";
    throw new QueueFullError(context.channelId, queue, limit, limit === "bytes" ? limits.maxQueueBytes : limits.maxQueueMessages);
  }
  if (status !== "ok") throw unexpected(reply);
  if (woke === "0") context.wakeRefused();
  return { seq: asNumber(first), pending: asNumber(second) };
}

/**
 * Acknowledges every message with `seq <= after` for `reader` (undefined: the default
 * reader), deletes what every live reader acknowledged (../readers.ts), then returns a
 * batch of those after it. A cursor above the last seq handed out, or of another epoch
 * than the queue's (`epoch`, when given), acknowledges nothing, moves no seq, and gets
 * the queue from its start (its cursor: the last seq returned, else the last handed out).
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function readAfter(context: QueueContext, after: number, epoch: string | undefined, reader: string | undefined): Promise<PollResult> {
  const { keys, queue, limits, upkeep } = context;
  const command = scriptCommand("bcReadAfter", keyList(keys), [
    upkeep.ttlMs,
    upkeep.touchEveryMs,
    queue,
    after,
    limits.maxBatchBytes,
    context.wake,
    epoch ?? ANY_EPOCH,
    reader ?? DEFAULT_READER,
    reader === undefined ? "0" : "1",
    READER_LEASE_MS,
    READER_RENEW_MS,
    MAX_READERS,
    context.now() - Date.now(),
  ]);
  const reply = await context.connection.change({
    ...command,
    route: keys.meta,
    confirm: returnsMessages,
    describe: describeRead(context),
    read: true,
  });
  return pollResult(context, reply);
}

/**
 * Returns a batch of the waiting messages and deletes it (at-most-once).
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function drain(context: QueueContext): Promise<PollResult> {
  const { keys, queue, limits, upkeep } = context;
  const command = scriptCommand("bcDrain", keyList(keys), [upkeep.ttlMs, upkeep.touchEveryMs, queue, limits.maxBatchBytes, context.wake]);
  // What a drain cleared is returned even unconfirmed: failing would lose it for certain,
  // where returning it risks it only coming again after a failover.
  const reply = await context.connection.change({ ...command, route: keys.meta, confirm: returnsMessages, unconfirmed: "return" });
  return pollResult(context, reply);
}

/**
 * The messages waiting in a queue and its epoch, read at one instant (one script on the
 * channel's slot), changing nothing.
 * @throws InvalidChannelIdError, StoreUnavailableError, StoreRefusedError.
 */
export async function snapshotQueue(connection: RedisConnection, space: KeySpace, channelId: string, queue: QueueName): Promise<QueueSnapshot> {
  const values = asArray(await connection.run((client) => client.bcSnapshot(keyList(space.channel(channelId)), [queue])));
  return { messages: messagesOf(values, 1), epoch: asEpoch(values[0]) };
}

/** Whether channel `channelId` of `space` has keys: its meta (made by its first write) or its state documents. */
export async function channelExists(connection: RedisConnection, space: KeySpace, channelId: string): Promise<boolean> {
  const keys = space.channel(channelId);
  return (await connection.run((client) => client.exists([keys.meta, keys.state]))) > 0;
}

/** Whether a poll script's reply holds messages (a read that returns some must be confirmed by the replicas). */
function returnsMessages(reply: unknown): boolean {
  return Array.isArray(reply) && reply.length > REPLY_HEAD;
}

/** A read's reply in words, for an error: which seqs it read. */
function describeRead(context: QueueContext): (reply: unknown) => string {
  return (reply) => {
    const values = reply as unknown[];
    return `the read of seq ${String(values[REPLY_HEAD])} to ${String(values[values.length - 4])} of the ${context.queue} queue of channel ${context.channelId}`;
  };
}

/** How many values a poll script's reply starts with before its messages. */
const REPLY_HEAD = 5;

/** A poll script's reply, `{cursor, pending, epoch, woke, missed, seq, event, data, ts, …}`. */
function pollResult(context: QueueContext, reply: unknown): PollResult {
  const values = asArray(reply);
  if (values[3] === "0") context.wakeRefused();
  const result = { messages: messagesOf(values, REPLY_HEAD), cursor: asNumber(values[0]), pending: asNumber(values[1]), epoch: asEpoch(values[2]) };
  return values[4] === "1" ? { ...result, missed: true } : result;
}

/** The messages of a script's reply from index `from` on: seq, event, data, ts, … */
function messagesOf(values: unknown[], from: number): QueueMessage[] {
  const messages: QueueMessage[] = [];
  for (let index = from; index + 3 < values.length; index += 4) {
    messages.push(toMessage(asNumber(values[index]), values[index + 1], values[index + 2], values[index + 3]));
  }
  return messages;
}

/** An epoch from a script's reply; a value that is not one (a field written by hand) reads as NO_EPOCH, which readers take as a new epoch. */
function asEpoch(value: unknown): string {
  return isEpoch(value) ? value : NO_EPOCH;
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
