/**
 * The log format: how a queue (its live messages, next seq and epoch) is kept in its
 * file, `<queue>.json` (docs/ARCHITECTURE.md, "On disk"), and the one way to read it
 * without a lock. Writers: ./queue-log.ts.
 *
 * A log is JSON lines (format 2), each line one record:
 *
 *     {"version":2,"next_seq":<int>,"epoch":"…"}         the header, always the first line
 *     {"seq":<int>,"event":…,"data":…,"ts":…}            a message
 *     {"ack":<int>}                                      every message with seq <= ack is gone
 *
 * Invariants every log written by the store keeps, and that {@link parseLog} checks:
 * - messages are in strictly increasing `seq` order;
 * - `next_seq` is greater than every `seq` and every ack in the file, and only ever
 *   grows, so a `seq` is never handed out twice, not even after the queue drains;
 * - `epoch` (../../protocol/epoch.ts) is minted when a log is started from nothing (its
 *   seq counter may begin again) and kept by every rewrite of the same queue; a header
 *   without one (a log written before epochs) has NO_EPOCH;
 * - every record ends in a newline: a last line without one is a write in progress or
 *   one cut short, which a reader ignores, so it never acts on a torn record.
 *
 * This module loads no library, so that the watcher and the status line can use it and start fast.
 * Reads are synchronous: a log is small (8 MiB of live messages at most), the
 * store reads it under a lock that should be held as briefly as possible, and the
 * watcher has nothing else to do meanwhile.
 */
import { EVENT_PATTERN } from "../../core/ids.js";
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { isEpoch, NO_EPOCH } from "../../protocol/epoch.js";
import type { QueueMessage } from "../../protocol/message.js";
import { CorruptQueueFileError } from "../errors.js";
import { readTextFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";

/** A log is compacted once its dead records outweigh its live ones by this much (./queue-log.ts). */
export const COMPACT_SLACK_BYTES = 64 * 1024;

/**
 * The largest file a queue log can be: twice its live bytes plus the compaction slack
 * (it is compacted beyond that), one record more, and a torn record; doubled, so that a
 * process whose limits are smaller than a writer's still reads what that writer wrote.
 * A larger file (a runaway or sparse file) is not a queue: it is refused unread.
 */
export function maxLogBytes(limits: Pick<Limits, "maxQueueBytes" | "maxMessageBytes">): number {
  return 2 * (2 * limits.maxQueueBytes + COMPACT_SLACK_BYTES + 2 * (limits.maxMessageBytes + 1024));
}

/** What a queue holds: its live messages, the next seq, and the epoch its seqs belong to. */
export interface Queue {
  next_seq: number;
  messages: QueueMessage[];
  epoch: string;
}

/** A log as read: its queue, and what the store needs to append to it. */
export interface ParsedLog {
  queue: Queue;
  /** Bytes up to the end of the last complete line. */
  validBytes: number;
  /** Bytes of the whole file: more than `validBytes` when its last line is torn. */
  totalBytes: number;
  /** Bytes of the live messages ({@link recordMessageBytes}), the measure of the queue's size limit. */
  liveBytes: number;
}

/** The text that starts every log: its header with `next_seq` and `epoch` (left out when it is NO_EPOCH), as one line. */
export function logHeader(nextSeq: number, epoch: string): string {
  return epoch === NO_EPOCH ? `{"version":2,"next_seq":${nextSeq}}\n` : `{"version":2,"next_seq":${nextSeq},"epoch":"${epoch}"}\n`;
}

/** One record as a line of the log. */
export function logRecord(record: QueueMessage | { ack: number }): string {
  return `${JSON.stringify(record)}\n`;
}

/** What the line of a message (from {@link logRecord}, or read back) counts against the byte limits: its JSON, without the newline (store/validate.ts `messageBytes`). */
export function recordMessageBytes(line: string): number {
  return Buffer.byteLength(line) - (line.endsWith("\n") ? 1 : 0);
}

/** The whole log of `queue`, compacted: its header and its live messages. */
export function serializeLog(queue: Queue): string {
  return logHeader(queue.next_seq, queue.epoch) + queue.messages.map(logRecord).join("");
}

/** The content of a queue with no message: one never written (NO_EPOCH), or one started anew with `epoch`. */
export function emptyQueue(nextSeq = 1, epoch = NO_EPOCH): Queue {
  return { next_seq: nextSeq, messages: [], epoch };
}

/**
 * Parses and checks the text of a queue log, folding its acknowledgements. A `next_seq` that is not above every message's seq (a hand-edited
 * or foreign file) is raised rather than refused: nothing is lost and no seq can repeat.
 * An empty file is an empty queue (a log whose creation was cut short wrote nothing).
 * @throws CorruptQueueFileError when the text is not a queue.
 */
export function parseLog(text: string, path = "queue log"): ParsedLog {
  if (text === "") return { queue: emptyQueue(), validBytes: 0, totalBytes: 0, liveBytes: 0 };
  const totalBytes = Buffer.byteLength(text);
  if (!text.startsWith('{"version":2,')) throw new CorruptQueueFileError(path, "it does not start with a version 2 header");
  const end = text.lastIndexOf("\n");
  if (end < 0) throw new CorruptQueueFileError(path, "its header line is cut short");
  const lines = text.slice(0, end).split("\n");
  const header = parseLine(lines[0]!, path);
  if (header.version !== 2 || !isSeq(header.next_seq)) throw new CorruptQueueFileError(path, "its first line is not a version 2 header");
  const epoch = header.epoch ?? NO_EPOCH;
  if (!isEpoch(epoch)) throw new CorruptQueueFileError(path, "its header's epoch is not one");
  const messages: QueueMessage[] = [];
  const sizes: number[] = [];
  let first = 0; // messages before this index were acknowledged
  let nextSeq = header.next_seq;
  let lastSeq = 0;
  for (let i = 1; i < lines.length; i++) {
    const record = parseLine(lines[i]!, path);
    if ("ack" in record) {
      if (!Number.isSafeInteger(record.ack) || (record.ack as number) < 0) throw new CorruptQueueFileError(path, `line ${i + 1} has a bad ack`);
      const ack = record.ack as number;
      while (first < messages.length && messages[first]!.seq <= ack) first += 1;
      nextSeq = Math.max(nextSeq, ack + 1);
      continue;
    }
    if (!isQueueMessage(record)) throw new CorruptQueueFileError(path, `line ${i + 1} is neither a message nor an ack`);
    if (record.seq <= lastSeq) throw new CorruptQueueFileError(path, "messages are not in increasing seq order");
    lastSeq = record.seq;
    nextSeq = Math.max(nextSeq, record.seq + 1);
    messages.push(record);
    sizes.push(recordMessageBytes(lines[i]!));
  }
  const live = messages.slice(first);
  const liveBytes = sizes.slice(first).reduce((sum, size) => sum + size, 0);
  return {
    queue: { next_seq: nextSeq, messages: live, epoch },
    validBytes: totalBytes - Buffer.byteLength(text.slice(end + 1)),
    totalBytes,
    liveBytes,
  };
}

function parseLine(line: string, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new CorruptQueueFileError(path, `a line is not JSON (${(error as Error).message})`);
  }
  if (!isRecord(value)) throw new CorruptQueueFileError(path, "a line is not a JSON object");
  return value;
}

/**
 * Reads and parses a log without taking its lock (see core/fs/safe-open.ts: no link
 * followed, nothing but a regular file of this user read, its size checked first).
 * @param maxBytes the largest file read. Default: what a queue within the default limits can be.
 * @returns `null` when the file does not exist.
 * @throws CorruptQueueFileError when the file is not a queue, not a regular file, or
 *   larger than `maxBytes`; UnsafeLayoutError; other I/O errors (EACCES, …) as they are.
 */
export function readLog(path: string, maxBytes: number = maxLogBytes(DEFAULT_LIMITS)): ParsedLog | null {
  let text: string | null;
  try {
    text = readTextFile(path, maxBytes);
  } catch (error) {
    if (error instanceof NotRegularFileError) throw new CorruptQueueFileError(path, `it is ${error.found}`);
    if (error instanceof FileTooLargeError)
      throw new CorruptQueueFileError(path, `it is ${error.bytes} bytes, more than a queue can hold (${error.maxBytes})`);
    throw error;
  }
  return text === null ? null : parseLog(text, path);
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
