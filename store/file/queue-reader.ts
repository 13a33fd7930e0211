/**
 * The file store's read-only view ({@link ChannelReader}): what waits in a queue, the
 * state documents and the session records, read without any lock. It never writes,
 * never creates a folder and never repairs: a corrupt queue, or something other than a
 * folder on the way to it, is reported (CorruptQueueFileError, NotRegularFileError) and
 * left for the server to move aside at its next write (a state document reads as none); an unsafe folder or file (another user's, or writable by
 * others) is refused (UnsafeLayoutError). Loads no lock code, so that the watcher
 * and the status line start fast.
 */
import { lstatSync } from "node:fs";
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { channelDir, channelsDir, queueFile, queueFileName, type QueueName, stateFile } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import type { ChangeSubscription, ChannelInfo, ChannelReader, QueueSnapshot, SessionReader } from "../store.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import { listChannelFolders } from "./channel-folders.js";
import { FILE_FALLBACK_WAKE_MS, subscribeToFile } from "./folder-watch.js";
import { maxLogBytes, readLog } from "./log-format.js";
import { READ_ONLY, reachFolder } from "../../core/fs/safe-open.js";
import { NotRegularFileError } from "../../core/fs/errors.js";
import { SessionFileReader } from "./session-read.js";
import { maxStateFileBytes, readStateFile } from "./state-read.js";

/** The channels in one data directory, read-only. */
export class FileQueueReader implements ChannelReader {
  readonly sessions: SessionReader;
  readonly fallbackWakeMs = FILE_FALLBACK_WAKE_MS;
  private readonly maxLogBytes: number;
  private readonly maxStateFileBytes: number;

  /**
   * @param dataDir the data directory (the servers').
   * @param limits the limits in force; a queue file larger than these allow is refused unread. Default {@link DEFAULT_LIMITS}.
   */
  constructor(
    readonly dataDir: string,
    limits: Pick<Limits, "maxQueueBytes" | "maxMessageBytes" | "maxStateBytes"> = DEFAULT_LIMITS,
  ) {
    this.sessions = new SessionFileReader(dataDir);
    this.maxLogBytes = maxLogBytes(limits);
    this.maxStateFileBytes = maxStateFileBytes(limits);
  }

  async peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    return (await this.snapshot(channelId, queue)).messages;
  }

  async snapshot(channelId: string, queue: QueueName): Promise<QueueSnapshot> {
    if (!reachFolder(this.dataDir, channelDir(this.dataDir, channelId), READ_ONLY)) return { messages: [], epoch: NO_EPOCH };
    const parsed = readLog(queueFile(this.dataDir, channelId, queue), this.maxLogBytes);
    return parsed ? { messages: parsed.queue.messages, epoch: parsed.queue.epoch } : { messages: [], epoch: NO_EPOCH };
  }

  async hasChannel(channelId: string): Promise<boolean> {
    return reachFolder(this.dataDir, channelDir(this.dataDir, channelId), READ_ONLY);
  }

  listChannels(): Promise<ChannelInfo[]> {
    return listChannelFolders(this.dataDir, READ_ONLY);
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return subscribeToQueue(this.dataDir, channelId, queue);
  }

  async readState(channelId: string, name: string): Promise<JsonValue | null> {
    const path = stateFile(this.dataDir, channelId, name);
    try {
      if (!reachFolder(this.dataDir, channelDir(this.dataDir, channelId), READ_ONLY)) return null;
    } catch (error) {
      // Something else in the folder's place holds no state; the server's next write moves it aside.
      if (error instanceof NotRegularFileError) return null;
      throw error;
    }
    return readStateFile(path, this.maxStateFileBytes);
  }
}

/**
 * Subscribes to changes of one queue file. Until the channel's folder exists, it watches
 * for the folder's creation instead, then moves into it; the move counts as a change,
 * so the caller reads once the new subscription is in place and misses nothing.
 * @throws InvalidChannelIdError.
 */
export function subscribeToQueue(dataDir: string, channelId: string, queue: QueueName): ChangeSubscription {
  const dir = channelDir(dataDir, channelId);
  if (isDirectory(dir)) return subscribeToFile(dir, queueFileName(queue));
  let current = subscribeToFile(channelsDir(dataDir), channelId);
  let inChannel = false;
  const moveIn = (): boolean => {
    if (inChannel || !isDirectory(dir)) return false;
    current.close();
    current = subscribeToFile(dir, queueFileName(queue));
    inChannel = true;
    return true;
  };
  return {
    async next(maxMs, signal) {
      if (moveIn()) return "changed";
      const woke = await current.next(maxMs, signal);
      moveIn();
      return woke;
    },
    close() {
      current.close();
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
