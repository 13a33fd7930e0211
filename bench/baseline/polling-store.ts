/**
 * The baseline's store: the plain polling design that backchannel is measured
 * against. Every change rewrites the whole queue file in place under an exclusive
 * lock, without fsync and without a temporary file, and a poll never waits: `waitMs`
 * is ignored, so readers find new messages only by polling again on a timer.
 *
 * It writes the same file format as backchannel's FileStore (the log, rewritten whole)
 * and takes proper-lockfile's lock (./lock.ts), so the two differ in what the designs
 * differ in: durable appends, event-driven waiting, and how the lock is waited for.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { assertEvent } from "../../core/ids.js";
import { channelDir, type QueueName, queueFile } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import { FileStore } from "../../store/file/file-store.js";
import { emptyQueue, parseLog, type Queue, serializeLog } from "../../store/file/log-format.js";
import type { AppendResult, PollOptions, PollResult } from "../../store/store.js";
import { withExclusiveLock } from "./lock.js";

/**
 * The plain polling store: append and poll are the baseline's own; everything the
 * benchmarks do not compare (state documents, sessions, peeking, listing) is the
 * FileStore's, which reads the baseline's files as they are.
 */
export class PollingStore extends FileStore {
  constructor(dataDir: string) {
    super({ dataDir });
  }

  override async append(channelId: string, queue: QueueName, event: string, data: JsonValue = {}): Promise<AppendResult> {
    assertEvent(event);
    const path = queueFile(this.dataDir, channelId, queue);
    await mkdir(channelDir(this.dataDir, channelId), { recursive: true, mode: 0o700 });
    return withExclusiveLock(path, async () => {
      const current = await readLog(path);
      if (current.messages.length >= this.limits.maxQueueMessages) throw new Error(`queue ${path} is full`);
      const message: QueueMessage = { seq: current.next_seq, event, data, ts: new Date().toISOString() };
      current.messages.push(message);
      await writeFile(path, serializeLog({ ...current, next_seq: message.seq + 1 }), { mode: 0o600 });
      return { seq: message.seq, pending: current.messages.length };
    });
  }

  /** Reads once, under the lock; `waitMs` and `signal` are ignored (a polling design does not wait). */
  override async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const path = queueFile(this.dataDir, channelId, queue);
    const { after } = options;
    await mkdir(channelDir(this.dataDir, channelId), { recursive: true, mode: 0o700 });
    return withExclusiveLock(path, async () => {
      const current = await readLog(path);
      const unread = current.messages.filter((message) => after === undefined || message.seq > after);
      const kept = after === undefined ? [] : unread;
      if (kept.length !== current.messages.length) {
        await writeFile(path, serializeLog({ ...current, messages: kept }), { mode: 0o600 });
      }
      return { messages: unread, cursor: unread.at(-1)?.seq ?? after ?? current.next_seq - 1, pending: 0, epoch: current.epoch };
    });
  }
}

/** The queue in `path`; a missing file is an empty queue. */
async function readLog(path: string): Promise<Queue> {
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  return text === null ? emptyQueue() : parseLog(text, path).queue;
}
