/**
 * The Redis store (docs/ARCHITECTURE.md, "The Redis store"): the same channels as the
 * file store, kept in Redis 7 (or Valkey), so that servers on several machines, in
 * containers or behind a load balancer share them. This class is the facade; each job
 * is a module of its own:
 *
 *   ./location.ts        the store URL, checked and shown without its password
 *   ./connection.ts      the command connection: readiness, outages, errors for the caller
 *   ./health.ts          the settings that could lose data, warned about at start
 *   ./keys.ts            key and pub/sub names (one hash slot per channel)
 *   ./scripts.ts         the Lua scripts: append, read with a cursor, drain, state, sweep
 *   ./queues.ts          the queue operations over the scripts
 *   ./wake-hub.ts        one subscriber connection, fanned out to every waiter
 *   ./state-docs.ts      per-channel state documents
 *   ./sessions.ts        session records
 *   ./saved-apps.ts      the apps the user kept
 *   ./channels.ts        listing, removal and the idle sweep
 *   ./reader.ts          the read-only view for the watcher and the status line
 *
 * Durability is Redis's: with `appendonly yes` and `appendfsync always`, a message is on
 * disk before its append is answered.
 */
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { warnOnStderr } from "../../core/warn.js";
import type { QueueName } from "../../core/paths.js";
import type { JsonValue, QueueMessage } from "../../protocol/message.js";
import { pollWithWait } from "../changes.js";
import type { AppendResult, ChangeSubscription, ChannelInfo, ChannelStore, PollOptions, PollResult, QueueSnapshot } from "../store.js";
import { NO_EPOCH } from "../../protocol/epoch.js";
import { checkCursor, checkMessage } from "../validate.js";
import { listChannels, listPrincipals, removeChannel, sweepIdle, usedBytes } from "./channels.js";
import { RedisConnection } from "./connection.js";
import { readSettings, replicaWarning, settingsWarnings, wakeRightsRefusal } from "./health.js";
import { type KeySpace, principalKeys, ROOT_KEYS } from "./keys.js";
import { parseRedisUrl } from "./location.js";
import { appendMessage, channelExists, drain, type QueueContext, queueContext, readAfter, snapshotQueue, type Upkeep, upkeepOf } from "./queues.js";
import { RedisSavedApps } from "./saved-apps.js";
import { RedisSessions } from "./sessions.js";
import { readStateDoc, updateStateDoc } from "./state-docs.js";
import { type ReplicaSetting, replicaSettingFromEnv } from "./replicated.js";
import { REDIS_FALLBACK_WAKE_MS, WakeHub } from "./wake-hub.js";

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). */
  url: string;
  /** Limits that differ from {@link DEFAULT_LIMITS}. */
  limits?: Partial<Limits>;
  /** Where warnings go (risky Redis settings, an outage and the recovery). Default: one line on stderr. */
  warn?: (message: string) => void;
  /** Check Redis's eviction and persistence settings once connected, and warn. Default true. */
  checkSettings?: boolean;
  /**
   * How often a waiting poll reads again when no wake-up came. Default 30,000 ms: wake-ups
   * come over pub/sub, and every outage wakes the waiters, so this is only a safety net.
   */
  fallbackWakeMs?: number;
  /** How long a call waits, from the start of an outage, for the connection to be remade before it fails. Default 2,000 ms. */
  readyWaitMs?: number;
  /**
   * How many replicas must have a change before it is answered (./replicated.ts): `"all"`
   * (every replica online when it is made), or a number. Default: `$BACKCHANNEL_REDIS_REPLICAS`, else `"all"`.
   */
  replicas?: ReplicaSetting;
  /** The clock a queue's readers are seen by (../readers.ts): Redis's own, shifted by how far this one is from `Date.now()`. Default `Date.now`. */
  now?: () => number;
}

/** What a store and its principals' views share: one connection, one subscriber, the limits. */
interface Shared {
  connection: RedisConnection;
  hub: WakeHub;
  limits: Readonly<Limits>;
  upkeep: Upkeep;
  fallbackWakeMs: number;
  warn: (message: string) => void;
  /** A script says Redis refused its wake-up (see ./wake-hub.ts `refuse`). */
  wakeRefused: () => void;
  /** See {@link RedisStoreOptions.now}. */
  now: () => number;
}

/** The Redis-backed {@link ChannelStore} over one key space; {@link RedisStore} is the store's own, opened from a URL. */
export class RedisStoreView implements ChannelStore {
  /** The limits in force. */
  readonly limits: Readonly<Limits>;
  readonly sessions: RedisSessions;
  readonly apps: RedisSavedApps;

  /**
   * @param shared what the store and its views share.
   * @param space the names this view's data has (./keys.ts).
   */
  protected constructor(
    protected readonly shared: Shared,
    private readonly space: KeySpace,
  ) {
    this.limits = shared.limits;
    this.sessions = new RedisSessions(shared.connection, shared.hub, space, this.limits.channelTtlMs);
    this.apps = new RedisSavedApps(shared.connection, space, shared.warn);
  }

  async append(channelId: string, queue: QueueName, event: string, data: JsonValue = {}): Promise<AppendResult> {
    const context = this.queue(channelId, queue);
    const json = checkMessage(event, data, this.limits);
    return appendMessage(context, event, json);
  }

  async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const context = this.queue(channelId, queue);
    const { after, epoch, reader, waitMs = 0, signal, onWaiting } = options;
    checkCursor(after, epoch, reader);
    const pollOnce = () => (after === undefined ? drain(context) : readAfter(context, after, epoch, reader));
    if (waitMs <= 0) return pollOnce();
    const result = await pollWithWait(this.watchQueue(channelId, queue), pollOnce, {
      waitMs,
      fallbackMs: this.shared.fallbackWakeMs,
      signal,
      onWaiting,
    });
    return result ?? { messages: [], cursor: after ?? 0, pending: 0, epoch: epoch ?? NO_EPOCH };
  }

  readState(channelId: string, name: string): Promise<JsonValue | null> {
    return readStateDoc(this.shared.connection, this.space, channelId, name);
  }

  updateState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue> {
    return updateStateDoc(this.shared.connection, this.space, channelId, name, this.limits.maxStateBytes, this.shared.upkeep, update);
  }

  async peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    return (await this.snapshot(channelId, queue)).messages;
  }

  snapshot(channelId: string, queue: QueueName): Promise<QueueSnapshot> {
    return snapshotQueue(this.shared.connection, this.space, channelId, queue);
  }

  hasChannel(channelId: string): Promise<boolean> {
    return channelExists(this.shared.connection, this.space, channelId);
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return this.shared.hub.listen(this.space.queueWake(channelId, queue));
  }

  get fallbackWakeMs(): number {
    return this.shared.fallbackWakeMs;
  }

  listChannels(): Promise<ChannelInfo[]> {
    return listChannels(this.shared.connection, this.space);
  }

  remove(channelId: string): Promise<void> {
    return removeChannel(this.shared.connection, this.space, channelId, this.shared.upkeep);
  }

  removeIdleChannels(now: number = Date.now()): Promise<string[]> {
    return sweepIdle(this.shared.connection, this.space, this.shared.upkeep, now);
  }

  /** A view over the same connection whose keys start `bc:p:<namespace>:` (./keys.ts). */
  forPrincipal(namespace: string): RedisStoreView {
    return new RedisStoreView(this.shared, principalKeys(namespace));
  }

  async usedBytes(): Promise<number> {
    return (await usedBytes(this.shared.connection, this.space)) + (await this.apps.usedBytes());
  }

  listPrincipals(): Promise<string[]> {
    return listPrincipals(this.shared.connection);
  }

  /** The context of a queue; checks the channel id first. */
  private queue(channelId: string, queue: QueueName): QueueContext {
    const { connection, upkeep, wakeRefused, now } = this.shared;
    return queueContext(connection, this.space, channelId, queue, this.limits, upkeep, wakeRefused, now);
  }
}

/** The Redis store at a URL. Safe to use from any number of processes and machines at once. Close it when done. */
export class RedisStore extends RedisStoreView {
  /** The store's URL without its password. */
  readonly shown: string;

  /**
   * @throws InvalidStoreUrlError for a URL that is not a Redis store's; Error for a
   *   `$BACKCHANNEL_REDIS_REPLICAS` that is not a replica setting.
   */
  constructor(options: RedisStoreOptions) {
    const address = parseRedisUrl(options.url);
    const limits = Object.freeze({ ...DEFAULT_LIMITS, ...options.limits });
    const warn = options.warn ?? warnOnStderr;
    const replicas = options.replicas ?? replicaSettingFromEnv();
    const connection = new RedisConnection({ address, name: "backchannel:store", warn, readyWaitMs: options.readyWaitMs, replicas });
    const hub = new WakeHub(connection, warn);
    const wakeRefused = () => hub.refuse("a publish on a wake channel was refused");
    const fallbackWakeMs = options.fallbackWakeMs ?? REDIS_FALLBACK_WAKE_MS;
    super({ connection, hub, limits, upkeep: upkeepOf(limits), fallbackWakeMs, warn, wakeRefused, now: options.now ?? Date.now }, ROOT_KEYS);
    this.shown = address.shown;
    if (options.checkSettings ?? true) this.warnAboutSettingsOnce(warn);
  }

  /** Closes the connections; calls after it fail, through this store and every view of it. */
  async close(): Promise<void> {
    this.shared.hub.close();
    await this.shared.connection.close();
  }

  /**
   * Once Redis first answers, reads its settings and warns about those that could lose
   * data, and checks that its user may publish the store's wake-ups (else waiters read
   * again on a short timer, ./wake-hub.ts).
   */
  private warnAboutSettingsOnce(warn: (message: string) => void): void {
    const connection = this.shared.connection;
    const stop = connection.onStateChange((up) => {
      if (!up) return;
      stop();
      wakeRightsRefusal(connection.client).then(
        (refusal) => {
          if (refusal !== undefined) this.shared.hub.refuse(refusal);
        },
        () => undefined,
      );
      readSettings(connection.client).then(
        (settings) => {
          for (const warning of settingsWarnings(settings)) warn(`the Redis store at ${this.shown}: ${warning}`);
        },
        (error: Error) =>
          warn(`could not read the settings of the Redis store at ${this.shown} (${error.message}); check that it keeps what it acknowledges`),
      );
      connection.replicaCount().then(
        (replicas) => {
          const warning = replicaWarning(connection.replicaSetting, replicas);
          if (warning !== undefined) warn(`the Redis store at ${this.shown}: ${warning}`);
        },
        () => undefined,
      );
    });
  }
}
