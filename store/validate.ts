/**
 * The checks every store makes before it appends a message, so that every store refuses
 * the same messages with the same errors.
 */
import { randomBytes } from "node:crypto";
import { assertEvent } from "../core/ids.js";
import { InvalidDataError, jsonProblem, type JsonValue } from "../core/json.js";
import type { Limits } from "../core/limits.js";
import { isEpoch } from "../protocol/epoch.js";
import type { QueueMessage } from "../protocol/message.js";
import { InvalidCursorError, InvalidReaderError, MessageTooLargeError } from "./errors.js";
import { isReaderId } from "./readers.js";

/**
 * Checks a message about to be appended.
 * @returns the JSON text of `data` (what counts against `limits.maxMessageBytes`).
 * @throws InvalidEventError, InvalidDataError, MessageTooLargeError.
 */
export function checkMessage(event: string, data: JsonValue, limits: Pick<Limits, "maxMessageBytes">): string {
  assertEvent(event);
  const problem = jsonProblem(data);
  if (problem) throw new InvalidDataError(problem);
  const json = JSON.stringify(data);
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.maxMessageBytes) throw new MessageTooLargeError(bytes, limits.maxMessageBytes);
  return json;
}

/**
 * Checks a poll's cursor, the epoch it came from and its reader.
 * @throws InvalidCursorError unless `after` is undefined or a whole number >= 0, and
 *   `epoch` undefined or an epoch (EPOCH_PATTERN); InvalidReaderError unless `reader` is
 *   undefined or a reader id (READER_ID_PATTERN).
 */
export function checkCursor(after: number | undefined, epoch?: string, reader?: string): void {
  if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) throw new InvalidCursorError(after);
  if (epoch !== undefined && !isEpoch(epoch)) throw new InvalidCursorError(after, epoch);
  if (reader !== undefined && !isReaderId(reader)) throw new InvalidReaderError(reader);
}

/** A new epoch for a queue whose seq counter starts again (../protocol/epoch.ts): 16 random characters of EPOCH_PATTERN. */
export function mintEpoch(): string {
  return randomBytes(12).toString("base64url");
}

/**
 * A message's size as the byte limits of a queue and of a batch count it: the UTF-8 bytes
 * of its JSON (`{"seq":…,"event":…,"data":…,"ts":…}`). Each store counts it its own
 * way (the file store from its log line, the Redis store in its scripts); this is the definition.
 */
export function messageBytes(message: QueueMessage): number {
  return Buffer.byteLength(JSON.stringify(message));
}

/** What appending `event` with `data` adds to a queue, as {@link messageBytes} counts it: its seq and time as written, but for a seq's digits. */
export function appendedBytes(event: string, data: JsonValue): number {
  return messageBytes({ seq: 0, event, data, ts: new Date().toISOString() });
}

/** The longest prefix of `messages` within `maxBatchBytes` ({@link messageBytes}), and always at least one message. */
export function takeBatch<T extends QueueMessage>(messages: T[], maxBatchBytes: number): T[] {
  let bytes = 0;
  let count = 0;
  for (const message of messages) {
    bytes += messageBytes(message);
    if (count > 0 && bytes > maxBatchBytes) break;
    count += 1;
  }
  return messages.slice(0, count);
}
