/**
 * The file store (DESIGN §4): every channel is a folder of queue logs (JSON lines, see
 * ./queue-file.ts) that all processes of the user share. Nothing lives in process
 * memory, so any number of server processes see the same channels.
 *
 * Invariants:
 * - every change to a queue file happens under its lock: one appended line (a message
 *   or an ack), or an atomic replacement (compaction, conversion, a fresh queue after
 *   corruption); a reader without the lock acts only on whole lines of whole files;
 * - an append or an ack is durable (fdatasync) before its caller hears of it; the sync
 *   runs after the lock is released, so that writers share journal commits;
 * - `seq` never repeats in a queue: `next_seq` only grows, is kept when the queue
 *   drains, is raised past any cursor a reader shows, and a queue restarted after
 *   corruption starts above every seq it may have handed out;
 * - a write refused for a limit changes nothing already queued;
 * - no path is built from a channel id before the id is checked, and symbolic links
 *   in the data directory are never followed.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, renameSync, type Stats } from "node:fs";
import { lstat, readdir, rename, rm, utimes } from "node:fs/promises";
import { basename, join } from "node:path";
import { assertChannelId, assertEvent, isChannelId } from "../../core/ids.js";
import { InvalidDataError, jsonProblem } from "../../core/json.js";
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { channelDir, channelsDir, queueFile, queueFileName, resolveDataDir, stateFile, type QueueName } from "../../core/paths.js";
import { TEMP_SUFFIX, writeFileAtomic } from "./atomic-write.js";
import { subscribeToFile } from "./change-watch.js";
import { InvalidCursorError, MessageTooLargeError, QueueFullError, StateTooLargeError } from "../errors.js";
import { withLock } from "./lock.js";
import { ALREADY_DURABLE, appendToLog, truncateLog, type PendingSync } from "./log-append.js";
import {
  CorruptQueueFileError,
  emptyQueue,
  logHeader,
  logRecord,
  parseQueueText,
  readQueue,
  readQueueFile,
  readTextNoFollow,
  salvageSeqFloor,
  serializeLog,
  type JsonValue,
  type ParsedQueue,
  type QueueFile,
  type QueueMessage,
} from "./queue-file.js";
import { removeIdleSessions, SessionFiles } from "./session-file.js";
import type { AppendResult, ChangeSubscription, ChannelInfo, ChannelStore, PollOptions, PollResult } from "../store.js";

/** Options of {@link FileStore}. */
export interface FileStoreOptions {
  /** The data directory. Default: {@link resolveDataDir} (`$BACKCHANNEL_HOME`, else the per-user state folder). */
  dataDir?: string;
  /** Limits that differ from {@link DEFAULT_LIMITS}. */
  limits?: Partial<Limits>;
  /** Where warnings (a corrupt file moved aside, …) go. Default: one line on stderr. */
  warn?: (message: string) => void;
  /** How often a waiting poll re-reads when no file-system event came (a file system without events). Default 5,000 ms. */
  fallbackWakeMs?: number;
}

/** How often a poll marks its channel as in use (for the idle sweep), per process and channel. */
const TOUCH_INTERVAL_MS = 10 * 60 * 1000;
/** A log is compacted once its dead records outweigh its live ones by this much. */
const COMPACT_SLACK_BYTES = 64 * 1024;
/** Temporary files older than this were left by a killed writer. */
const ORPHAN_TEMP_AGE_MS = 60 * 1000;

/** The file-backed {@link ChannelStore}. Safe to use from any number of processes at once. */
export class FileStore implements ChannelStore {
  /** The data directory this store reads and writes. */
  readonly dataDir: string;
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  readonly sessions: SessionFiles;
  private readonly warn: (message: string) => void;
  private readonly fallbackWakeMs: number;
  private readonly touched = new Map<string, number>();

  constructor(options: FileStoreOptions = {}) {
    this.dataDir = options.dataDir ?? resolveDataDir();
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...options.limits });
    this.warn = options.warn ?? ((message) => process.stderr.write(`backchannel: ${message}\n`));
    this.fallbackWakeMs = options.fallbackWakeMs ?? 5000;
    this.sessions = new SessionFiles(this.dataDir, this.limits.lockStaleMs);
  }

  async append(channelId: string, queue: QueueName, event: string, data: JsonValue = {}): Promise<AppendResult> {
    const path = queueFile(this.dataDir, channelId, queue);
    assertEvent(event);
    const problem = jsonProblem(data);
    if (problem) throw new InvalidDataError(problem);
    const bytes = Buffer.byteLength(JSON.stringify(data));
    if (bytes > this.limits.maxMessageBytes) throw new MessageTooLargeError(bytes, this.limits.maxMessageBytes);
    this.ensureChannelDir(channelId);
    const { result, pending } = await withLock(path, this.limits.lockStaleMs, (lock) => {
      const current = this.readLocked(path);
      const { messages, next_seq: seq } = current.queue;
      if (messages.length >= this.limits.maxQueueMessages) {
        throw new QueueFullError(channelId, queue, "messages", this.limits.maxQueueMessages);
      }
      const message: QueueMessage = { seq, event, data, ts: new Date().toISOString() };
      const record = logRecord(message);
      const liveBytes = current.liveBytes + Buffer.byteLength(record);
      if (liveBytes > this.limits.maxQueueBytes) throw new QueueFullError(channelId, queue, "bytes", this.limits.maxQueueBytes);
      lock.assertHeld();
      const next: QueueFile = { version: 1, next_seq: seq + 1, messages: [...messages, message] };
      return { result: { seq, pending: next.messages.length }, pending: this.writeRecord(path, current, record, next, liveBytes) };
    });
    pending.sync();
    return result;
  }

  async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const path = queueFile(this.dataDir, channelId, queue);
    const { after, waitMs = 0, signal, onWaiting } = options;
    if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) {
      throw new InvalidCursorError(after);
    }
    const dir = this.ensureChannelDir(channelId);
    this.markInUse(dir);
    if (waitMs <= 0) return this.pollOnce(path, after);
    // Subscribe before the first read, so that a message landing between the read
    // and the wait still wakes this poll.
    const subscription = subscribeToFile(dir, basename(path));
    try {
      const deadline = Date.now() + waitMs;
      for (let round = 0; ; round++) {
        const result = await this.pollOnce(path, after);
        const remaining = deadline - Date.now();
        if (result.messages.length > 0 || remaining <= 0 || signal?.aborted) return result;
        if (round === 0) onWaiting?.();
        const woke = await subscription.next(Math.min(remaining, this.fallbackWakeMs), signal);
        if (woke === "aborted") return result;
      }
    } finally {
      subscription.close();
    }
  }

  async readState(channelId: string, name: string): Promise<JsonValue | null> {
    return readStateFile(stateFile(this.dataDir, channelId, name));
  }

  async updateState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue> {
    const path = stateFile(this.dataDir, channelId, name);
    this.ensureChannelDir(channelId);
    return withLock(path, this.limits.lockStaleMs, async (lock) => {
      const next = update(readStateFile(path));
      const text = JSON.stringify(next);
      const bytes = Buffer.byteLength(text);
      if (bytes > this.limits.maxStateBytes) throw new StateTooLargeError(name, bytes, this.limits.maxStateBytes);
      lock.assertHeld();
      writeFileAtomic(path, text);
      return next;
    });
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return subscribeToFile(this.ensureChannelDir(channelId), queueFileName(queue));
  }

  async peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    const path = queueFile(this.dataDir, channelId, queue);
    return (await this.readUnlocked(path))?.messages ?? [];
  }

  async listChannels(): Promise<ChannelInfo[]> {
    let names: string[];
    try {
      names = await readdir(channelsDir(this.dataDir));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const channels: ChannelInfo[] = [];
    for (const name of names.filter(isChannelId)) {
      const stats = await lstat(join(channelsDir(this.dataDir), name)).catch(() => undefined);
      if (stats?.isDirectory()) channels.push({ id: name, lastActivity: stats.mtime });
    }
    return channels;
  }

  async remove(channelId: string): Promise<void> {
    const dir = channelDir(this.dataDir, channelId);
    // Renaming first makes the removal atomic for everyone else: the channel is
    // either whole or gone, never half deleted.
    const trash = join(channelsDir(this.dataDir), `.removed-${channelId}-${randomBytes(4).toString("hex")}`);
    try {
      await rename(dir, trash);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    await rm(trash, { recursive: true, force: true });
    this.touched.delete(dir);
  }

  /**
   * Removes channels idle for longer than `limits.channelTtlMs` (no write, and no poll
   * for that long), skipping any with a lock held, temporary files left by killed
   * writers, and session files idle for as long.
   * @returns the ids of the channels removed.
   */
  async removeIdleChannels(now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    for (const channel of await this.listChannels()) {
      const dir = channelDir(this.dataDir, channel.id);
      const entries = await readdir(dir).catch(() => [] as string[]);
      if (entries.some((name) => name.endsWith(".lock"))) continue;
      if (now - channel.lastActivity.getTime() > this.limits.channelTtlMs) {
        await this.remove(channel.id);
        removed.push(channel.id);
        continue;
      }
      for (const name of entries.filter((entry) => entry.endsWith(TEMP_SUFFIX))) {
        const stats = await lstat(join(dir, name)).catch(() => undefined);
        if (stats && now - stats.mtimeMs > ORPHAN_TEMP_AGE_MS) await rm(join(dir, name), { force: true });
      }
    }
    await removeIdleSessions(this.dataDir, this.limits.channelTtlMs, now);
    return removed;
  }

  /** One read of a queue: by cursor when `after` is given, else read-and-clear. */
  private async pollOnce(path: string, after: number | undefined): Promise<PollResult> {
    return after === undefined ? this.drain(path) : this.readAfter(path, after);
  }

  private async readAfter(path: string, after: number): Promise<PollResult> {
    let current = (await this.readUnlocked(path)) ?? emptyQueue();
    const received = current.messages.some((message) => message.seq <= after);
    // A cursor at or past next_seq comes from a reader that saw a queue this file no
    // longer remembers (deleted by hand, say); the ack raises next_seq past it, which
    // keeps every new message above the cursor, where the reader will look for it.
    if (received || after >= current.next_seq) {
      const acknowledged = await withLock(path, this.limits.lockStaleMs, (lock) => {
        lock.assertHeld();
        return this.acknowledge(path, this.readLocked(path), after);
      });
      acknowledged.pending.sync();
      current = acknowledged.queue;
    }
    const unread = current.messages.filter((message) => message.seq > after);
    const batch = this.takeBatch(unread);
    return { messages: batch, cursor: batch.at(-1)?.seq ?? after, pending: unread.length - batch.length };
  }

  private async drain(path: string): Promise<PollResult> {
    const current = await this.readUnlocked(path);
    if (!current || current.messages.length === 0) {
      return { messages: [], cursor: (current?.next_seq ?? 1) - 1, pending: 0 };
    }
    const drained = await withLock(path, this.limits.lockStaleMs, (lock) => {
      const locked = this.readLocked(path);
      const batch = this.takeBatch(locked.queue.messages);
      if (batch.length === 0) return { batch, queue: locked.queue, pending: ALREADY_DURABLE };
      lock.assertHeld();
      return { batch, ...this.acknowledge(path, locked, batch.at(-1)!.seq) };
    });
    drained.pending.sync();
    const { batch, queue } = drained;
    return { messages: batch, cursor: batch.at(-1)?.seq ?? queue.next_seq - 1, pending: queue.messages.length };
  }

  /** Writes the ack of every message up to `seq`. Call only under the lock. */
  private acknowledge(path: string, current: ParsedQueue, seq: number): { queue: QueueFile; pending: PendingSync } {
    const kept = current.queue.messages.filter((message) => message.seq > seq);
    const gone = current.queue.messages.slice(0, current.queue.messages.length - kept.length);
    const liveBytes = current.liveBytes - gone.reduce((sum, message) => sum + Buffer.byteLength(logRecord(message)), 0);
    const queue: QueueFile = { version: 1, next_seq: Math.max(current.queue.next_seq, seq + 1), messages: kept };
    return { queue, pending: this.writeRecord(path, current, logRecord({ ack: seq }), queue, liveBytes) };
  }

  /**
   * Adds `record` to the log (`next` is the queue with it, `liveBytes` its live size).
   * When dead records (acknowledged messages, acks) would outweigh the live ones and
   * pass {@link COMPACT_SLACK_BYTES}, the log is compacted instead: rewritten whole
   * (header and live messages), durably, and renamed over the old one. Call only under the lock.
   */
  private writeRecord(path: string, current: ParsedQueue, record: string, next: QueueFile, liveBytes: number): PendingSync {
    const fileBytes = current.validBytes + Buffer.byteLength(record);
    if (fileBytes > 2 * liveBytes + COMPACT_SLACK_BYTES) {
      writeFileAtomic(path, serializeLog(next));
      return ALREADY_DURABLE;
    }
    const text = current.validBytes === 0 ? logHeader(current.queue.next_seq) + record : record;
    return appendToLog(path, text, current.validBytes);
  }

  /** The longest prefix of `messages` within `maxBatchBytes`, and always at least one message. */
  private takeBatch(messages: QueueMessage[]): QueueMessage[] {
    let bytes = 0;
    let count = 0;
    for (const message of messages) {
      bytes += Buffer.byteLength(JSON.stringify(message));
      if (count > 0 && bytes > this.limits.maxBatchBytes) break;
      count += 1;
    }
    return messages.slice(0, count);
  }

  /** Reads a queue without its lock; a corrupt file is handed to {@link readLocked} to be moved aside. */
  private async readUnlocked(path: string): Promise<QueueFile | null> {
    try {
      return readQueueFile(path);
    } catch (error) {
      if (!(error instanceof CorruptQueueFileError)) throw error;
      return withLock(path, this.limits.lockStaleMs, () => this.readLocked(path).queue);
    }
  }

  /**
   * Reads a queue while holding its lock and leaves its file ready for an append: a log
   * with no torn last line (cut off: it was never acknowledged), a format-1 document
   * converted to a log. A file that is not a queue is moved aside to
   * `<name>.corrupt-<timestamp>` (never deleted), reported, and replaced by an empty log
   * whose next_seq is above anything the old file can have handed out: the larger of
   * what its remains show and the current time in milliseconds (seqs that count up from
   * 1 by one per durable write stay far below it). Call only under the lock.
   */
  private readLocked(path: string): ParsedQueue {
    let parsed: ParsedQueue | null;
    try {
      parsed = readQueue(path);
    } catch (error) {
      if (!(error instanceof CorruptQueueFileError)) throw error;
      const remains = readTextOrNothing(path);
      const aside = `${path}.corrupt-${fileTimestamp()}`;
      renameSync(path, aside);
      this.warn(`${error.reason}: moved ${path} aside to ${aside}; the queue starts again, empty`);
      // Written at once, so that the new floor outlives this call even when the caller only reads.
      return this.rewrite(path, emptyQueue(Math.max(salvageSeqFloor(remains) + 1, Date.now())));
    }
    if (!parsed) return parseQueueText("", path);
    if (parsed.format === 1) return this.rewrite(path, parsed.queue);
    if (parsed.totalBytes > parsed.validBytes) truncateLog(path, parsed.validBytes);
    return parsed;
  }

  /** Replaces the file at `path` with the compact log of `queue`, durably. Call only under the lock. */
  private rewrite(path: string, queue: QueueFile): ParsedQueue {
    const text = serializeLog(queue);
    writeFileAtomic(path, text);
    return parseQueueText(text, path);
  }

  /**
   * Makes sure the channel folder exists as a real folder (mode 0700, created with the
   * data directory when needed). Anything else in its place (a file, a symbolic link)
   * is moved aside to `<id>.foreign-<timestamp>`, never followed, and reported.
   */
  private ensureChannelDir(channelId: string): string {
    const dir = channelDir(this.dataDir, assertChannelId(channelId));
    let stats: Stats | undefined;
    try {
      stats = lstatSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (stats?.isDirectory()) return dir;
    if (stats) {
      const aside = `${dir}.foreign-${fileTimestamp()}`;
      renameSync(dir, aside);
      this.warn(`${dir} should be a channel folder but was a ${stats.isSymbolicLink() ? "symbolic link" : "file"}: moved it aside to ${aside}`);
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** Marks a channel as in use for the idle sweep; at most once per {@link TOUCH_INTERVAL_MS}. */
  private markInUse(dir: string): void {
    const now = Date.now();
    if (now - (this.touched.get(dir) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.touched.set(dir, now);
    utimes(dir, new Date(now), new Date(now)).catch(() => undefined);
  }
}

/**
 * The value of a state file, or `null` when there is none. A state file that does not
 * parse is reported as missing: state documents are rebuilt by the app that owns them.
 */
function readStateFile(path: string): JsonValue | null {
  let text: string | null;
  try {
    text = readTextNoFollow(path);
  } catch (error) {
    if (error instanceof CorruptQueueFileError) return null;
    throw error;
  }
  if (text === null) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}

/** The text of `path` for salvage, or "" when it cannot be read as a regular file. */
function readTextOrNothing(path: string): string {
  try {
    return readTextNoFollow(path) ?? "";
  } catch {
    return "";
  }
}

/** The current time as it can stand in a file name: `2026-11-29T12-00-00-000Z`. */
function fileTimestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}
