/**
 * The queue file format (DESIGN §4) and the one way to read it without a lock.
 *
 *     { "version": 1, "next_seq": <int>, "messages": [ { seq, event, data, ts }, … ] }
 *
 * Invariants every file written by the store keeps, and that {@link parseQueueFile} checks:
 * - messages are in strictly increasing `seq` order;
 * - `next_seq` is greater than every `seq` in the file, and only ever grows, so a
 *   `seq` is never handed out twice, not even after the queue drains;
 * - files are replaced by rename, never written in place, so a reader without the
 *   lock sees a whole file, old or new.
 *
 * This module imports nothing but Node, so that the watcher can use it and start fast.
 * Reads are synchronous: a queue file is small (8 MiB at most), the store reads it
 * under a lock that should be held as briefly as possible, and the watcher has
 * nothing else to do meanwhile.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { EVENT_PATTERN } from "../core/ids.js";
import type { JsonValue } from "../core/json.js";

export type { JsonValue } from "../core/json.js";

/** One message in a queue. `seq` is unique in its queue for ever; `ts` is ISO-8601 UTC. */
export interface QueueMessage {
  seq: number;
  event: string;
  data: JsonValue;
  ts: string;
}

/** The content of a queue file. */
export interface QueueFile {
  version: 1;
  next_seq: number;
  messages: QueueMessage[];
}

/** The content of a queue that has never been written. */
export function emptyQueue(nextSeq = 1): QueueFile {
  return { version: 1, next_seq: nextSeq, messages: [] };
}

/** Thrown by {@link parseQueueFile} when a file is not a queue; `reason` says what is wrong. */
export class CorruptQueueFileError extends Error {
  override readonly name = "CorruptQueueFileError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path} is not a valid queue file: ${reason}`);
  }
}

/**
 * Parses and checks the text of a queue file. A `next_seq` that is not above every
 * message's seq (a hand-edited or foreign file) is raised to `max seq + 1` rather than
 * refused: nothing is lost and no seq can repeat.
 * @throws CorruptQueueFileError when the text is not JSON or not of the queue shape.
 */
export function parseQueueFile(text: string, path = "queue file"): QueueFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CorruptQueueFileError(path, `not JSON (${(error as Error).message})`);
  }
  if (!isRecord(value) || value.version !== 1) throw new CorruptQueueFileError(path, "missing version 1");
  const nextSeq = value.next_seq;
  if (!isSeq(nextSeq)) throw new CorruptQueueFileError(path, "next_seq is not a positive integer");
  if (!Array.isArray(value.messages)) throw new CorruptQueueFileError(path, "messages is not an array");
  let lastSeq = 0;
  for (const message of value.messages as unknown[]) {
    if (!isQueueMessage(message)) throw new CorruptQueueFileError(path, "a message is not {seq, event, data, ts}");
    if (message.seq <= lastSeq) throw new CorruptQueueFileError(path, "messages are not in increasing seq order");
    lastSeq = message.seq;
  }
  return { version: 1, next_seq: Math.max(nextSeq, lastSeq + 1), messages: value.messages as QueueMessage[] };
}

/** The text the store writes for a queue. */
export function serializeQueueFile(queue: QueueFile): string {
  return JSON.stringify(queue);
}

/**
 * Reads a queue file without taking its lock. Symbolic links are not followed: a link
 * planted where a queue file belongs is reported as corrupt, never read through.
 * @returns the queue, or `null` when the file does not exist.
 * @throws CorruptQueueFileError when the file is not a queue (or is a link or a folder);
 *   other I/O errors (EACCES, …) are thrown as they are.
 */
export function readQueueFile(path: string): QueueFile | null {
  const text = readTextNoFollow(path);
  return text === null ? null : parseQueueFile(text, path);
}

/**
 * The text of the regular file at `path`, read without following a symbolic link.
 * @returns `null` when there is no file.
 * @throws CorruptQueueFileError when `path` is a link or a folder; other I/O errors as they are.
 */
export function readTextNoFollow(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw new CorruptQueueFileError(path, "it is a symbolic link");
    throw error;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new CorruptQueueFileError(path, "it is not a regular file");
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * The highest seq that the remains of a corrupt file still show (`next_seq - 1`, or
 * the largest `"seq"`), or 0 when none can be read. Used to restart a queue above
 * every seq it may have handed out.
 */
export function salvageSeqFloor(text: string): number {
  let floor = 0;
  for (const match of text.matchAll(/"(next_seq|seq)"\s*:\s*(\d{1,15})/g)) {
    const value = Number(match[2]) - (match[1] === "next_seq" ? 1 : 0);
    if (value > floor) floor = value;
  }
  return floor;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSeq(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

function isQueueMessage(value: unknown): value is QueueMessage {
  return (
    isRecord(value) &&
    isSeq(value.seq) &&
    typeof value.event === "string" &&
    EVENT_PATTERN.test(value.event) &&
    "data" in value &&
    typeof value.ts === "string"
  );
}
