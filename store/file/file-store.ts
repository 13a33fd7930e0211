/**
 * The file store (docs/ARCHITECTURE.md, "The file store"): every channel is a folder of
 * queue logs that all processes of the user share. Nothing lives in process memory, so
 * any number of server processes see the same channels. This class is the facade; each
 * job is a module of its own (the table in docs/ARCHITECTURE.md, "Modules"), on the safe
 * file-system helpers of core/fs/ (safe open, locks, atomic writes).
 */
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { readdirSync, rmdirSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { PRINCIPAL_NAMESPACE_PATTERN } from "../../core/ids.js";
import { principalDir, principalsDir, QUEUE_NAMES, type QueueName, resolveDataDir, spaceReserveFile, stateFile } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import { pollWithWait } from "../changes.js";
import type { AppendResult, ChangeSubscription, ChannelInfo, ChannelStore, PollOptions, PollResult, QueueSnapshot } from "../store.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import { checkCursor, checkMessage, messageBytes } from "../validate.js";
import { DEFAULT_READER } from "../readers.js";
import { ChannelFolders } from "./channel-folders.js";
import { type QueueContext, QueueLog } from "./queue-log.js";
import { FileQueueReader } from "./queue-reader.js";
import { CorruptQueueFileError } from "../errors.js";
import { READ_ONLY, reachFolder } from "../../core/fs/safe-open.js";
import { NotRegularFileError } from "../../core/fs/errors.js";
import { SessionFiles } from "./session-files.js";
import { SavedAppFiles } from "./saved-apps.js";
import { updateStateFile } from "./state-files.js";
import { maxStateFileBytes, readStateFile } from "./state-read.js";
import { removeIdle } from "./sweep.js";
import { SpaceReserve } from "../../core/fs/space-reserve.js";
import { FILE_FALLBACK_WAKE_MS } from "./folder-watch.js";
import { warnOnStderr } from "../../core/warn.js";

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
  /** The clock a queue's readers are seen by (../readers.ts), in ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/** Options of a principal's view, made by {@link FileStore.forPrincipal}: its store's, with `dataDir` the principal's folder. */
export interface FileStoreViewOptions extends FileStoreOptions {
  /** The store's own data directory, where `principals/` is. */
  rootDir: string;
  /** The store's space reserve (core/fs/space-reserve.ts), one for the data directory and every principal in it. */
  reserve: SpaceReserve;
}

/** The file-backed {@link ChannelStore}. Safe to use from any number of processes at once. */
export class FileStore implements ChannelStore {
  /** The data directory this store reads and writes: the store's own, or `principals/<namespace>/` in it for a principal's view. */
  readonly dataDir: string;
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  readonly sessions: SessionFiles;
  readonly apps: SavedAppFiles;
  private readonly warn: (message: string) => void;
  readonly fallbackWakeMs: number;
  private readonly reader: FileQueueReader;
  private readonly folders: ChannelFolders;
  /** The store's own data directory (the same as {@link dataDir} but in a principal's view). */
  private readonly rootDir: string;
  private readonly reserve: SpaceReserve;
  /** See {@link FileStoreOptions.now}. */
  private readonly now: () => number;
  /** What every queue of this store shares (./queue-log.ts). */
  private readonly queues: QueueContext;
  /**
   * Makes a principal's view's own folder, reached from the store's data directory as
   * every folder below it is (made 0700, never through a link), before anything is made
   * in it: a principal's folder is made by its first write, never by a read.
   */
  private readonly reachOwnFolder: () => void;

  constructor(options: FileStoreOptions | FileStoreViewOptions = {}) {
    this.dataDir = options.dataDir ?? resolveDataDir();
    this.rootDir = "rootDir" in options ? options.rootDir : this.dataDir;
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...options.limits });
    this.warn = options.warn ?? warnOnStderr;
    this.reserve = "reserve" in options ? options.reserve : new SpaceReserve(spaceReserveFile(this.rootDir), this.warn);
    this.fallbackWakeMs = options.fallbackWakeMs ?? FILE_FALLBACK_WAKE_MS;
    this.now = options.now ?? Date.now;
    this.reachOwnFolder = this.isView() ? () => reachFolder(this.rootDir, this.dataDir, { create: true, warn: this.warn }) : () => undefined;
    this.sessions = new SessionFiles(this.dataDir, this.limits.lockStaleMs, this.warn, this.reachOwnFolder);
    this.apps = new SavedAppFiles(this.dataDir, this.warn, this.reachOwnFolder);
    this.reader = new FileQueueReader(this.dataDir, this.limits);
    this.folders = new ChannelFolders(this.dataDir, this.limits.channelTtlMs, this.warn);
    this.queues = { rootDir: this.rootDir, dataDir: this.dataDir, limits: this.limits, warn: this.warn, reserve: this.reserve };
  }

  async append(channelId: string, queue: QueueName, event: string, data: JsonValue = {}): Promise<AppendResult> {
    const log = new QueueLog(this.queues, channelId, queue);
    checkMessage(event, data, this.limits);
    return log.append(event, data);
  }

  async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const log = new QueueLog(this.queues, channelId, queue);
    const { after, epoch, reader, waitMs = 0, signal, onWaiting } = options;
    checkCursor(after, epoch, reader);
    const readAs = (recorded: boolean) => () => {
      if (after === undefined) return log.drain();
      return log.readAfter(after, epoch, recorded ? { id: reader ?? DEFAULT_READER, named: reader !== undefined, now: this.now() } : null);
    };
    // A read that does not wait makes nothing: a channel nobody made reads as an empty queue, and records no reader.
    if (waitMs <= 0 && this.channelIsMissing(channelId)) return readAs(false)();
    const read = readAs(true);
    this.reachOwnFolder();
    const dir = this.folders.ensure(channelId);
    this.folders.markInUse(dir);
    if (waitMs <= 0) return read();
    // A waiting poll keeps its channel marked in use at every wake-up, so that the idle
    // sweep never takes it; waking at least once per touch interval keeps the mark fresh
    // even when the TTL is short.
    const pollOnce = () => {
      this.folders.markInUse(dir);
      return read();
    };
    const fallbackMs = Math.min(this.fallbackWakeMs, this.folders.touchIntervalMs);
    const result = await pollWithWait(this.reader.watchQueue(channelId, queue), pollOnce, { waitMs, fallbackMs, signal, onWaiting });
    return result ?? { messages: [], cursor: after ?? 0, pending: 0, epoch: epoch ?? NO_EPOCH };
  }

  async readState(channelId: string, name: string): Promise<JsonValue | null> {
    const path = stateFile(this.dataDir, channelId, name);
    try {
      if (!this.folders.find(channelId)) return null;
    } catch (error) {
      // Something else in a folder's place reads as no state; the next write moves it aside.
      if (error instanceof NotRegularFileError) return null;
      throw error;
    }
    return readStateFile(path, maxStateFileBytes(this.limits));
  }

  async updateState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue> {
    const path = stateFile(this.dataDir, channelId, name);
    this.reachOwnFolder();
    this.folders.ensure(channelId);
    const lock = { staleMs: this.limits.lockStaleMs, remakeFolder: () => this.folders.ensure(channelId), warn: this.warn };
    return updateStateFile(path, name, this.limits, lock, update);
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return this.reader.watchQueue(channelId, queue);
  }

  peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    return this.reader.peek(channelId, queue);
  }

  snapshot(channelId: string, queue: QueueName): Promise<QueueSnapshot> {
    return this.reader.snapshot(channelId, queue);
  }

  hasChannel(channelId: string): Promise<boolean> {
    return this.reader.hasChannel(channelId);
  }

  async listChannels(): Promise<ChannelInfo[]> {
    return this.hasOwnFolder() ? this.folders.list() : [];
  }

  async remove(channelId: string): Promise<void> {
    if (this.hasOwnFolder()) await this.folders.remove(channelId);
  }

  /**
   * Removes channels idle for longer than the channel TTL (see ./sweep.ts). Idleness is
   * judged by the file system's clock, never this process's, so the file store takes no `now`.
   * A principal's view then removes its own folder when nothing is left in it.
   */
  async removeIdleChannels(): Promise<string[]> {
    if (!this.hasOwnFolder()) return [];
    const removed = await removeIdle(this.folders, this.limits);
    if (this.isView()) this.removeOwnFolderIfEmpty();
    return removed;
  }

  /** A principal's view; its folder is made by its first write (see {@link reachOwnFolder}). */
  forPrincipal(namespace: string): FileStore {
    return new FileStore({
      dataDir: principalDir(this.rootDir, namespace),
      rootDir: this.rootDir,
      reserve: this.reserve,
      limits: this.limits,
      warn: this.warn,
      fallbackWakeMs: this.fallbackWakeMs,
      now: this.now,
    });
  }

  /** The live messages of every queue (store/validate.ts `messageBytes`, as the Redis store's `bytes:<queue>` counts them), the state documents and the saved apps; a queue that cannot be read counts nothing. */
  async usedBytes(): Promise<number> {
    let bytes = 0;
    for (const { id } of await this.listChannels()) {
      for (const queue of QUEUE_NAMES) {
        const messages = await this.reader.peek(id, queue).catch((error: Error) => {
          if (error instanceof CorruptQueueFileError) return [];
          throw error;
        });
        for (const message of messages) bytes += messageBytes(message);
      }
      bytes += await this.folders.stateBytes(id);
    }
    return bytes + (await this.apps.usedBytes());
  }

  async listPrincipals(): Promise<string[]> {
    const dir = principalsDir(this.rootDir);
    if (!reachFolder(this.rootDir, dir, READ_ONLY)) return [];
    return (await readdir(dir)).filter((name) => PRINCIPAL_NAMESPACE_PATTERN.test(name));
  }

  /** Whether this is a principal's view (its data directory is a folder of the store's). */
  private isView(): boolean {
    return this.rootDir !== this.dataDir;
  }

  /** Whether this store's data directory exists: always for the store itself (its readers handle a missing one), for a view once it wrote. */
  private hasOwnFolder(): boolean {
    return !this.isView() || reachFolder(this.rootDir, this.dataDir, READ_ONLY);
  }

  /** Whether nothing is where the channel's folder would be; something else in the way counts as there (a write moves it aside). */
  private channelIsMissing(channelId: string): boolean {
    try {
      return !this.hasOwnFolder() || this.folders.find(channelId) === null;
    } catch (error) {
      if (error instanceof NotRegularFileError) return false;
      throw error;
    }
  }

  /**
   * Removes this view's folder when it holds nothing but empty folders (after the sweep:
   * no channel, session or saved app), so that the principal no longer counts among
   * the store's. Only `rmdir`, which removes an empty folder and nothing else: a write
   * that raced with it either keeps the folder or fails before anything was written.
   */
  private removeOwnFolderIfEmpty(): void {
    try {
      for (const name of readdirSync(this.dataDir)) rmdirSync(join(this.dataDir, name));
      rmdirSync(this.dataDir);
    } catch {
      // Something is left in it (or it went meanwhile): it stays.
    }
  }
}
