/**
 * The baseline's store: the plain polling design that backchannel is measured
 * against. Every change rewrites the whole queue file in place under an exclusive
 * lock, without fsync and without a temporary file, and a poll never waits: `waitMs`
 * is ignored, so readers find new messages only by polling again on a timer.
 *
 * It uses the same file format and the same kind of lock (proper-lockfile) as
 * backchannel's FileStore, so the two differ in what the designs differ in: durable
 * atomic replacement, event-driven waiting, and how the lock is waited for.
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { assertEvent, isChannelId } from "../../core/ids.js";
import { channelDir, channelsDir, queueFile, queueFileName, stateFile, type QueueName } from "../../core/paths.js";
import { emptyQueue, parseQueueFile, type JsonValue, type QueueFile, type QueueMessage } from "../../store/file/queue-file.js";
import { SessionFiles } from "../../store/file/session-file.js";
import type { AppendResult, ChangeSubscription, ChannelInfo, ChannelStore, PollOptions, PollResult } from "../../store/store.js";
import { subscribeToFile } from "../../store/file/change-watch.js";
import { withExclusiveLock } from "./lock.js";

/** The plain polling {@link ChannelStore}. */
export class PollingStore implements ChannelStore {
  readonly limits: Readonly<Limits> = DEFAULT_LIMITS;
  // Session records are not what the baseline is measured on: it shares backchannel's.
  readonly sessions: SessionFiles;

  constructor(readonly dataDir: string) {
    this.sessions = new SessionFiles(dataDir, this.limits.lockStaleMs);
  }

  async append(channelId: string, queue: QueueName, event: string, data: JsonValue = {}): Promise<AppendResult> {
    assertEvent(event);
    const path = queueFile(this.dataDir, channelId, queue);
    await mkdir(channelDir(this.dataDir, channelId), { recursive: true, mode: 0o700 });
    return withExclusiveLock(path, async () => {
      const current = await readQueue(path);
      if (current.messages.length >= this.limits.maxQueueMessages) throw new Error(`queue ${path} is full`);
      const message: QueueMessage = { seq: current.next_seq, event, data, ts: new Date().toISOString() };
      current.messages.push(message);
      await writeFile(path, JSON.stringify({ ...current, next_seq: message.seq + 1 }), { mode: 0o600 });
      return { seq: message.seq, pending: current.messages.length };
    });
  }

  /** Reads once, under the lock; `waitMs` and `signal` are ignored (a polling design does not wait). */
  async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const path = queueFile(this.dataDir, channelId, queue);
    const { after } = options;
    await mkdir(channelDir(this.dataDir, channelId), { recursive: true, mode: 0o700 });
    return withExclusiveLock(path, async () => {
      const current = await readQueue(path);
      const unread = current.messages.filter((message) => after === undefined || message.seq > after);
      const kept = after === undefined ? [] : unread;
      if (kept.length !== current.messages.length) {
        await writeFile(path, JSON.stringify({ ...current, messages: kept }), { mode: 0o600 });
      }
      return { messages: unread, cursor: unread.at(-1)?.seq ?? after ?? current.next_seq - 1, pending: 0 };
    });
  }

  async readState(channelId: string, name: string): Promise<JsonValue | null> {
    const text = await readFile(stateFile(this.dataDir, channelId, name), "utf8").catch(() => null);
    return text === null ? null : (JSON.parse(text) as JsonValue);
  }

  async updateState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue> {
    const path = stateFile(this.dataDir, channelId, name);
    await mkdir(channelDir(this.dataDir, channelId), { recursive: true, mode: 0o700 });
    return withExclusiveLock(path, async () => {
      const next = update(await this.readState(channelId, name));
      await writeFile(path, JSON.stringify(next), { mode: 0o600 });
      return next;
    });
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return subscribeToFile(channelDir(this.dataDir, channelId), queueFileName(queue));
  }

  async peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    return (await readQueue(queueFile(this.dataDir, channelId, queue))).messages;
  }

  async listChannels(): Promise<ChannelInfo[]> {
    const names = await readdir(channelsDir(this.dataDir)).catch(() => [] as string[]);
    const channels: ChannelInfo[] = [];
    for (const id of names.filter(isChannelId)) {
      channels.push({ id, lastActivity: (await stat(channelDir(this.dataDir, id))).mtime });
    }
    return channels;
  }

  async remove(channelId: string): Promise<void> {
    await rm(channelDir(this.dataDir, channelId), { recursive: true, force: true });
  }
}

/** The queue in `path`; a missing file is an empty queue. */
async function readQueue(path: string): Promise<QueueFile> {
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  return text === null ? emptyQueue() : parseQueueFile(text, path);
}
