/**
 * The file store (DESIGN §4): every channel is a folder of JSON queue files that all
 * processes of the user share. Nothing lives in process memory but caches of what is
 * on disk, so any number of server processes see the same channels.
 *
 * Invariants:
 * - every change to a queue file happens under its lock, as read → change → atomic
 *   replace (writeFileAtomic), so a reader without the lock sees a whole file;
 * - `seq` never repeats in a queue: `next_seq` only grows, is kept when the queue
 *   drains, is raised past any cursor a reader shows, and a queue restarted after
 *   corruption starts above every seq it may have handed out;
 * - a write refused for a limit changes nothing already queued;
 * - no path is built from a channel id before the id is checked, and symbolic links
 *   in the data directory are never followed.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, renameSync } from "node:fs";
import { lstat, readdir, rename, rm, utimes } from "node:fs/promises";
import { basename, join } from "node:path";
import { assertChannelId, assertEvent, isChannelId } from "../core/ids.js";
import { InvalidDataError, jsonProblem } from "../core/json.js";
import { DEFAULT_LIMITS, type Limits } from "../core/limits.js";
import { channelDir, channelsDir, queueFile, resolveDataDir, stateFile, type QueueName } from "../core/paths.js";
import { TEMP_SUFFIX, writeFileAtomic } from "./atomic-write.js";
import { subscribeToFile } from "./change-watch.js";
import { MessageTooLargeError, QueueFullError, StateTooLargeError } from "./errors.js";
import { withLock } from "./lock.js";
import {
  CorruptQueueFileError,
  emptyQueue,
  readQueueFile,
  readTextNoFollow,
  salvageSeqFloor,
  serializeQueueFile,
  type JsonValue,
  type QueueFile,
  type QueueMessage,
} from "./queue-file.js";
import type { AppendResult, ChannelInfo, ChannelStore, PollOptions, PollResult } from "./store.js";

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
/** Temporary files older than this were left by a killed writer. */
const ORPHAN_TEMP_AGE_MS = 60 * 1000;

/** The file-backed {@link ChannelStore}. Safe to use from any number of processes at once. */
export class FileStore implements ChannelStore {
  /** The data directory this store reads and writes. */
  readonly dataDir: string;
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  private readonly warn: (message: string) => void;
  private readonly fallbackWakeMs: number;
  private readonly touched = new Map<string, number>();

  constructor(options: FileStoreOptions = {}) {
    this.dataDir = options.dataDir ?? resolveDataDir();
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...options.limits });
    this.warn = options.warn ?? ((message) => process.stderr.write(`backchannel: ${message}\n`));
    this.fallbackWakeMs = options.fallbackWakeMs ?? 5000;
  }

  async append(channelId: string, queue: QueueName, event: string, data: JsonValue = {}): Promise<AppendResult> {
    const path = queueFile(this.dataDir, channelId, queue);
    assertEvent(event);
    const problem = jsonProblem(data);
    if (problem) throw new InvalidDataError(problem);
    const bytes = Buffer.byteLength(JSON.stringify(data));
    if (bytes > this.limits.maxMessageBytes) throw new MessageTooLargeError(bytes, this.limits.maxMessageBytes);
    this.ensureChannelDir(channelId);
    return withLock(path, this.limits.lockStaleMs, (lock) => {
      const current = this.readLocked(path);
      if (current.messages.length >= this.limits.maxQueueMessages) {
        throw new QueueFullError(channelId, queue, "messages", this.limits.maxQueueMessages);
      }
      const message: QueueMessage = { seq: current.next_seq, event, data, ts: new Date().toISOString() };
      const next: QueueFile = { version: 1, next_seq: message.seq + 1, messages: [...current.messages, message] };
      const text = serializeQueueFile(next);
      if (Buffer.byteLength(text) > this.limits.maxQueueBytes) {
        throw new QueueFullError(channelId, queue, "bytes", this.limits.maxQueueBytes);
      }
      lock.assertHeld();
      writeFileAtomic(path, text);
      return { seq: message.seq, pending: next.messages.length };
    });
  }

  async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const path = queueFile(this.dataDir, channelId, queue);
    const { after, waitMs = 0, signal, onWaiting } = options;
    if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) {
      throw new RangeError(`after must be a whole number >= 0 (the cursor of your last poll), not ${after}`);
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
   * for that long), skipping any with a lock held, and temporary files left by killed
   * writers.
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
    // longer remembers (deleted by hand, say); raising next_seq past it keeps every
    // new message above the cursor, where the reader will look for it.
    if (received || after >= current.next_seq) {
      current = await withLock(path, this.limits.lockStaleMs, (lock) => {
        const locked = this.readLocked(path);
        const next: QueueFile = {
          version: 1,
          next_seq: Math.max(locked.next_seq, after + 1),
          messages: locked.messages.filter((message) => message.seq > after),
        };
        lock.assertHeld();
        writeFileAtomic(path, serializeQueueFile(next));
        return next;
      });
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
    return withLock(path, this.limits.lockStaleMs, (lock) => {
      const locked = this.readLocked(path);
      const batch = this.takeBatch(locked.messages);
      const rest = locked.messages.slice(batch.length);
      if (batch.length > 0) {
        lock.assertHeld();
        writeFileAtomic(path, serializeQueueFile({ version: 1, next_seq: locked.next_seq, messages: rest }));
      }
      return { messages: batch, cursor: batch.at(-1)?.seq ?? locked.next_seq - 1, pending: rest.length };
    });
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
      return withLock(path, this.limits.lockStaleMs, () => this.readLocked(path));
    }
  }

  /**
   * Reads a queue while holding its lock. A file that is not a queue is moved aside to
   * `<name>.corrupt-<timestamp>` (never deleted), reported, and replaced by an empty
   * queue whose next_seq is above anything the old file can have handed out: the
   * larger of what its remains show and the current time in milliseconds (seqs that
   * count up from 1 by one per durable write stay far below it). Call only under the lock.
   */
  private readLocked(path: string): QueueFile {
    try {
      return readQueueFile(path) ?? emptyQueue();
    } catch (error) {
      if (!(error instanceof CorruptQueueFileError)) throw error;
      const remains = readTextOrNothing(path);
      const aside = `${path}.corrupt-${fileTimestamp()}`;
      renameSync(path, aside);
      this.warn(`${error.reason}: moved ${path} aside to ${aside}; the queue starts again, empty`);
      // Written at once, so that the new floor outlives this call even when the caller only reads.
      const fresh = emptyQueue(Math.max(salvageSeqFloor(remains) + 1, Date.now()));
      writeFileAtomic(path, serializeQueueFile(fresh));
      return fresh;
    }
  }

  /**
   * Makes sure the channel folder exists as a real folder (mode 0700, created with the
   * data directory when needed). Anything else in its place (a file, a symbolic link)
   * is moved aside to `<id>.foreign-<timestamp>`, never followed, and reported.
   */
  private ensureChannelDir(channelId: string): string {
    const dir = channelDir(this.dataDir, assertChannelId(channelId));
    let stats;
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
