/**
 * The Redis store's read-only view ({@link ChannelReader}): what waits in a queue, the
 * state documents and the session records, for the watcher and the status line. It
 * writes nothing (its one script, a queue's snapshot, is flagged `no-writes`); waiting is
 * one subscriber connection (./wake-hub.ts).
 */
import type { QueueName } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import type { ChangeSubscription, ChannelInfo, ChannelReader, QueueSnapshot, SessionReader } from "../store.js";
import { listChannels } from "./channels.js";
import { RedisConnection } from "./connection.js";
import { ROOT_KEYS } from "./keys.js";
import { parseRedisUrl } from "./location.js";
import { channelExists, snapshotQueue } from "./queues.js";
import { RedisSessionReader } from "./sessions.js";
import { readStateDoc } from "./state-docs.js";
import { REDIS_FALLBACK_WAKE_MS, WakeHub } from "./wake-hub.js";

/** Options of {@link RedisReader}. */
export interface RedisReaderOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…`. */
  url: string;
  /** How long a read waits, from the start of an outage, for the connection to be remade before it fails. Default 2,000 ms. */
  readyWaitMs?: number;
  /** Where a refused wake-up is reported, once (./wake-hub.ts). Default: nowhere. */
  warn?: (message: string) => void;
}

/** The channels of one Redis store, read-only. Close it when done: it holds connections. */
export class RedisReader implements ChannelReader {
  readonly sessions: SessionReader;
  readonly fallbackWakeMs = REDIS_FALLBACK_WAKE_MS;
  /** The store's URL without its password. */
  readonly shown: string;
  private readonly connection: RedisConnection;
  private readonly hub: WakeHub;

  /** @throws InvalidStoreUrlError for a URL that is not a Redis store's. */
  constructor(options: RedisReaderOptions) {
    const address = parseRedisUrl(options.url);
    this.shown = address.shown;
    this.connection = new RedisConnection({ address, name: "backchannel:reader", readyWaitMs: options.readyWaitMs });
    this.hub = new WakeHub(this.connection, options.warn);
    this.sessions = new RedisSessionReader(this.connection, this.hub, ROOT_KEYS);
  }

  async peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    return (await this.snapshot(channelId, queue)).messages;
  }

  snapshot(channelId: string, queue: QueueName): Promise<QueueSnapshot> {
    return snapshotQueue(this.connection, ROOT_KEYS, channelId, queue);
  }

  hasChannel(channelId: string): Promise<boolean> {
    return channelExists(this.connection, ROOT_KEYS, channelId);
  }

  listChannels(): Promise<ChannelInfo[]> {
    return listChannels(this.connection, ROOT_KEYS);
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return this.hub.listen(ROOT_KEYS.queueWake(channelId, queue));
  }

  readState(channelId: string, name: string): Promise<JsonValue | null> {
    return readStateDoc(this.connection, ROOT_KEYS, channelId, name);
  }

  /**
   * Waits until Redis answers.
   * @throws StoreUnavailableError when it does not within the ready wait.
   */
  async ping(): Promise<void> {
    await this.connection.run((client) => client.ping());
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    this.hub.close();
    await this.connection.close();
  }
}
