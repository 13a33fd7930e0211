/**
 * The limits of a remote principal (docs/ARCHITECTURE.md, "Remote serving"): how many
 * channels it may have, how many messages it may append per minute, and how many bytes
 * its channels may hold (core/limits.ts); and how many principals the store may hold
 * ({@link PrincipalRoster}). {@link withPrincipalLimits} puts them in front
 * of a principal's view of a store (`store.forPrincipal(namespace)`), for every tool at once.
 *
 * What is exact and what is not:
 * - channels and bytes are counted from the store, so every process's writes count: the
 *   channels are read again whenever a call names one this process has not seen, the
 *   bytes when a write would pass the limit by the last count and that count is older
 *   than {@link REFRESH_MS} (so room freed by reading is seen within that time).
 *   Processes creating channels or writing at the same instant may together pass a
 *   limit by as much as raced;
 * - appends per minute are counted by each process: behind a balancer over N replicas a
 *   principal may append up to N times the limit.
 *
 * - bytes are everything the principal holds: queued messages, state documents and
 *   saved apps. A state document's growth is counted as its change is decided, and a
 *   saved app's before it is written, so writes one after another each see those
 *   before (as appends do).
 *
 * Each principal's store operations run one at a time in this process, in the order
 * they come, each after a rest twice as long as the one before took ({@link
 * PrincipalUsage.inTurn}): a read of a full queue is tens of milliseconds of the one
 * thread, and a principal asking for it many times at once otherwise held every other
 * caller's calls for seconds. A waiting poll waits outside its turn and takes one for
 * each read.
 *
 * Invariant: a refused call changes nothing in the store.
 */
import { assertChannelId } from "../core/ids.js";
import type { Limits } from "../core/limits.js";
import type { QueueName } from "../core/paths.js";
import { NO_EPOCH } from "../protocol/epoch.js";
import type { JsonValue, QueueMessage } from "../protocol/message.js";
import { pollWithWait } from "./changes.js";
import { PrincipalLimitError, TooManyPrincipalsError } from "./errors.js";
import { appendedBytes } from "./validate.js";
import type { AppendResult, ChangeSubscription, ChannelInfo, ChannelStore, PollOptions, PollResult, QueueSnapshot, SessionStore } from "./store.js";
import type { SavedApp, SavedAppStore, SavedAppSummary } from "./saved-app.js";

/** How long counts read from the store are trusted before a call that needs them reads them again. */
export const REFRESH_MS = 5000;

/** The longest rest between two store operations of one principal (see {@link PrincipalUsage.inTurn}). */
const MAX_REST_MS = 1000;

/** The window of the appends limit. */
const MINUTE_MS = 60_000;

/**
 * The principals a store holds (`listPrincipals`), as this process knows them, against
 * the limit on how many it may hold (`maxPrincipals`): a principal new to the store may
 * write only while there is room; reading makes nothing, so it needs none. The store is
 * read again when a principal this process does not know asks and the last read is
 * {@link REFRESH_MS} old (so room freed by the idle sweep is seen); replicas admitting
 * new principals at the same instant can pass the limit by what raced. Keep one per
 * process and store.
 */
export class PrincipalRoster {
  private known = new Set<string>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  /** @param store the whole store (not a principal's view). */
  constructor(private readonly store: ChannelStore) {}

  /**
   * Admits the writes of the principal of `namespace`: one the store holds, or a new one within the limit.
   * @throws TooManyPrincipalsError; the store's errors when it cannot be listed.
   */
  async admit(namespace: string): Promise<void> {
    if (this.known.has(namespace)) return;
    if (Date.now() - this.readAt >= REFRESH_MS) await this.read();
    if (this.known.has(namespace)) return;
    const { maxPrincipals, channelTtlMs } = this.store.limits;
    if (this.known.size >= maxPrincipals) throw new TooManyPrincipalsError(maxPrincipals, channelTtlMs);
    this.known.add(namespace);
  }

  /** Reads the principals from the store; concurrent calls share one read. */
  private async read(): Promise<void> {
    this.reading ??= this.store
      .listPrincipals()
      .then((namespaces) => {
        this.known = new Set(namespaces);
        this.readAt = Date.now();
      })
      .finally(() => {
        this.reading = undefined;
      });
    await this.reading;
  }
}

/**
 * One principal's use of the store, as this process knows it: keep one per principal
 * while the principal is in use (a new one forgets the appends of the last minute).
 */
export class PrincipalUsage {
  private channels = new Set<string>();
  private bytes = 0;
  /** Bytes admitted since the last read of the store. */
  private added = 0;
  private bytesReadAt = Number.NEGATIVE_INFINITY;
  private readingChannels: Promise<void> | undefined;
  private readingBytes: Promise<void> | undefined;
  /** When each append of the last minute was admitted, oldest first. */
  private readonly appends: number[] = [];
  /** Whether a store operation of the principal runs now (see {@link inTurn}). */
  private operating = false;
  /** The operations waiting for their turn, first come first. */
  private readonly turns: (() => void)[] = [];

  /** The principal's admission to write ({@link admitWrites}), once asked. */
  private writing: Promise<void> | undefined;

  /**
   * @param limits the store's limits (maxPrincipalChannels, maxPrincipalAppendsPerMinute, maxPrincipalBytes).
   * @param admitToStore admits the principal's first write (a {@link PrincipalRoster}'s `admit`); default: every principal may write.
   * @param now the clock the counts' ages and the appends' minute are read on, in ms; default `Date.now`.
   */
  constructor(
    private readonly limits: Readonly<Limits>,
    private readonly admitToStore: () => Promise<void> = async () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Admits the principal's writes: asked of the store once, and again after a refusal.
   * @throws TooManyPrincipalsError.
   */
  admitWrites(): Promise<void> {
    this.writing ??= this.admitToStore().catch((error: unknown) => {
      this.writing = undefined;
      throw error;
    });
    return this.writing;
  }

  /**
   * Admits a call on channel `channelId` of `view`: one the principal has, or a new one within the channel limit.
   * @throws InvalidChannelIdError; PrincipalLimitError "channels".
   */
  async admitChannel(view: ChannelStore, channelId: string): Promise<void> {
    if (this.channels.has(assertChannelId(channelId))) return;
    await this.readChannels(view);
    if (this.channels.has(channelId)) return;
    const max = this.limits.maxPrincipalChannels;
    if (this.channels.size >= max) {
      const days = Math.round(this.limits.channelTtlMs / 86_400_000);
      throw new PrincipalLimitError(
        "channels",
        max,
        undefined,
        `Use a channel you already have (open_reader and open_app take a channel_id); channels unused for ${days >= 1 ? `${days} days` : `${this.limits.channelTtlMs} ms`} are removed, which frees room.`,
      );
    }
    this.channels.add(channelId);
  }

  /**
   * Admits `bytes` more in the principal's channels.
   * @throws PrincipalLimitError "bytes".
   */
  async admitBytes(view: ChannelStore, bytes: number): Promise<void> {
    // The store is read for a first count, and again only when a write would not fit: reading the file store's queues costs.
    const unknown = this.bytesReadAt === Number.NEGATIVE_INFINITY;
    if ((unknown || !this.fits(bytes)) && this.now() - this.bytesReadAt >= REFRESH_MS) await this.readBytes(view);
    this.checkBytes(bytes);
    this.added += bytes;
  }

  /**
   * Counts `bytes` more (a state document's growth, decided under its lock, so with the
   * counts at hand), checking first that a growth fits; a negative `bytes` (a document
   * that shrank, or a growth handed back by {@link releaseBytes}) frees room.
   * @throws PrincipalLimitError "bytes" (nothing counted).
   */
  reserveBytes(bytes: number): void {
    if (bytes > 0) this.checkBytes(bytes);
    this.added += bytes;
  }

  /** Hands back bytes counted by {@link reserveBytes} for a change that was not stored. */
  releaseBytes(bytes: number): void {
    this.added -= bytes;
  }

  /**
   * Reads the principal's bytes from the store when they were never read, or, with
   * `ifStale`, when the last count is at least {@link REFRESH_MS} old.
   * @returns whether the store was read.
   */
  async countBytes(view: ChannelStore, ifStale = false): Promise<boolean> {
    const age = this.now() - this.bytesReadAt;
    if (age !== Number.POSITIVE_INFINITY && !(ifStale && age >= REFRESH_MS)) return false;
    await this.readBytes(view);
    return true;
  }

  /**
   * Checks, with the counts at hand, that `bytes` more fit.
   * @throws PrincipalLimitError "bytes".
   */
  checkBytes(bytes: number): void {
    if (this.fits(bytes)) return;
    throw new PrincipalLimitError(
      "bytes",
      this.limits.maxPrincipalBytes,
      undefined,
      "Read the messages waiting in your channels (a message read with a cursor past it is deleted), or send less; unused channels are removed in time.",
    );
  }

  /**
   * Admits one append, counting it.
   * @throws PrincipalLimitError "appends", saying when the oldest append of the last minute leaves the window.
   */
  admitAppend(): void {
    const now = this.now();
    while (this.appends.length > 0 && this.appends[0]! <= now - MINUTE_MS) this.appends.shift();
    const max = this.limits.maxPrincipalAppendsPerMinute;
    if (this.appends.length >= max) {
      throw new PrincipalLimitError("appends", max, this.appends[0]! + MINUTE_MS - now, "Send fewer, larger messages.");
    }
    this.appends.push(now);
  }

  /**
   * Runs `operation` (a store operation of the principal) when the principal has no
   * other running, in the order asked. The turn passes on after a rest twice as long as
   * the operation took (at most {@link MAX_REST_MS}), on a timer: a principal that does
   * nothing but costly operations has about a third of the one thread, and other
   * callers' calls are served in the rest (the garbage its reads leave grows slower too).
   */
  async inTurn<T>(operation: () => Promise<T>): Promise<T> {
    if (this.operating) await new Promise<void>((resolve) => this.turns.push(resolve));
    this.operating = true;
    const started = performance.now();
    try {
      return await operation();
    } finally {
      setTimeout(
        () => {
          const next = this.turns.shift();
          if (next) next();
          else this.operating = false;
        },
        Math.min(2 * (performance.now() - started), MAX_REST_MS),
      );
    }
  }

  private fits(bytes: number): boolean {
    return this.bytes + this.added + bytes <= this.limits.maxPrincipalBytes;
  }

  /** Reads the principal's channels from the store; concurrent calls share one read. */
  private async readChannels(view: ChannelStore): Promise<void> {
    this.readingChannels ??= view
      .listChannels()
      .then((channels) => {
        this.channels = new Set(channels.map((channel) => channel.id));
      })
      .finally(() => {
        this.readingChannels = undefined;
      });
    await this.readingChannels;
  }

  /** Reads the bytes the principal's channels hold from the store; concurrent calls share one read. */
  private async readBytes(view: ChannelStore): Promise<void> {
    this.readingBytes ??= view
      .usedBytes()
      .then((bytes) => {
        this.bytes = bytes;
        this.added = 0;
        this.bytesReadAt = this.now();
      })
      .finally(() => {
        this.readingBytes = undefined;
      });
    await this.readingBytes;
  }
}

/**
 * `view` (a principal's view of a store) with the principal's limits of `usage` in front
 * of every call that can make a channel or add data: append, poll (on a channel not yet
 * counted), updateState, saving an app; every write (those, and a session's update)
 * first admits the principal to the store ({@link PrincipalUsage.admitWrites}). Every
 * operation on channels and saved apps runs in the principal's turn ({@link
 * PrincipalUsage.inTurn}); sessions' reads and change subscriptions pass through.
 */
export function withPrincipalLimits(view: ChannelStore, usage: PrincipalUsage): ChannelStore {
  return new LimitedView(view, usage);
}

class LimitedView implements ChannelStore {
  readonly limits: Readonly<Limits>;
  readonly sessions: SessionStore;
  readonly apps: SavedAppStore;
  readonly fallbackWakeMs: number;

  constructor(
    private readonly view: ChannelStore,
    private readonly usage: PrincipalUsage,
  ) {
    this.limits = view.limits;
    this.fallbackWakeMs = view.fallbackWakeMs;
    const { sessions } = view;
    this.sessions = {
      read: (key) => sessions.read(key),
      watch: (key) => sessions.watch(key),
      update: async (key, update) => {
        await usage.admitWrites();
        return sessions.update(key, update);
      },
    };
    this.apps = new LimitedApps(view, usage);
  }

  append(channelId: string, queue: QueueName, event: string, data?: JsonValue): Promise<AppendResult> {
    return this.usage.inTurn(async () => {
      await this.usage.admitWrites();
      await this.usage.admitChannel(this.view, channelId);
      await this.usage.admitBytes(this.view, appendedBytes(event, data ?? {}));
      this.usage.admitAppend();
      return this.view.append(channelId, queue, event, data);
    });
  }

  /** A poll; one that waits waits here, outside the principal's turn, and takes a turn for each read (as the stores wait: store/changes.ts). */
  async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const { after, epoch, reader, waitMs = 0, signal, onWaiting } = options;
    const read = () =>
      this.usage.inTurn(async () => {
        await this.usage.admitChannel(this.view, channelId);
        return this.view.poll(channelId, queue, { after, epoch, reader });
      });
    if (waitMs <= 0) return read();
    // Read at least four times per channel TTL, as the stores' own waits do: each read marks the channel in use for the idle sweep.
    const fallbackMs = Math.min(this.fallbackWakeMs, this.limits.channelTtlMs / 4);
    const result = await pollWithWait(this.view.watchQueue(channelId, queue), read, { waitMs, fallbackMs, signal, onWaiting });
    return result ?? { messages: [], cursor: after ?? 0, pending: 0, epoch: epoch ?? NO_EPOCH };
  }

  updateState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue> {
    return this.usage.inTurn(async () => {
      await this.usage.admitWrites();
      await this.usage.admitChannel(this.view, channelId);
      await this.usage.countBytes(this.view);
      try {
        return await this.changeState(channelId, name, update);
      } catch (error) {
        // Refused by a count older than the refresh time: read the store again (reading may have freed room), and try once more.
        if (!(error instanceof PrincipalLimitError && error.limit === "bytes") || !(await this.usage.countBytes(this.view, true))) throw error;
        return this.changeState(channelId, name, update);
      }
    });
  }

  /**
   * A state change whose growth counts against the principal's bytes as it is decided,
   * so that changes made one after another each see those before. `update` may run
   * more than once (the Redis store retries a change that raced): each run hands back
   * what the one before counted, and a change that is not stored hands back its count.
   */
  private async changeState(channelId: string, name: string, update: (current: JsonValue | null) => JsonValue): Promise<JsonValue> {
    let counted = 0;
    try {
      return await this.view.updateState(channelId, name, (current) => {
        this.usage.releaseBytes(counted);
        counted = 0;
        const next = update(current);
        const growth = jsonBytes(next) - (current === null ? 0 : jsonBytes(current));
        this.usage.reserveBytes(growth);
        counted = growth;
        return next;
      });
    } catch (error) {
      this.usage.releaseBytes(counted);
      throw error;
    }
  }

  readState(channelId: string, name: string): Promise<JsonValue | null> {
    return this.usage.inTurn(() => this.view.readState(channelId, name));
  }

  peek(channelId: string, queue: QueueName): Promise<QueueMessage[]> {
    return this.usage.inTurn(() => this.view.peek(channelId, queue));
  }

  snapshot(channelId: string, queue: QueueName): Promise<QueueSnapshot> {
    return this.usage.inTurn(() => this.view.snapshot(channelId, queue));
  }

  hasChannel(channelId: string): Promise<boolean> {
    return this.usage.inTurn(() => this.view.hasChannel(channelId));
  }

  watchQueue(channelId: string, queue: QueueName): ChangeSubscription {
    return this.view.watchQueue(channelId, queue);
  }

  listChannels(): Promise<ChannelInfo[]> {
    return this.usage.inTurn(() => this.view.listChannels());
  }

  remove(channelId: string): Promise<void> {
    return this.usage.inTurn(() => this.view.remove(channelId));
  }

  removeIdleChannels(now?: number): Promise<string[]> {
    return this.usage.inTurn(() => this.view.removeIdleChannels(now));
  }

  usedBytes(): Promise<number> {
    return this.usage.inTurn(() => this.view.usedBytes());
  }

  forPrincipal(namespace: string): ChannelStore {
    return this.view.forPrincipal(namespace);
  }

  listPrincipals(): Promise<string[]> {
    return this.view.listPrincipals();
  }
}

/** A principal's saved apps, each save's growth admitted against the principal's bytes first. */
class LimitedApps implements SavedAppStore {
  private readonly apps: SavedAppStore;

  constructor(
    private readonly view: ChannelStore,
    private readonly usage: PrincipalUsage,
  ) {
    this.apps = view.apps;
  }

  write(app: SavedApp): Promise<void> {
    return this.usage.inTurn(async () => {
      await this.usage.admitWrites();
      const growth = Buffer.byteLength(JSON.stringify(app)) - (await this.apps.sizeOf(app.name));
      if (growth > 0) await this.usage.admitBytes(this.view, growth);
      try {
        await this.apps.write(app);
      } catch (error) {
        if (growth > 0) this.usage.releaseBytes(growth);
        throw error;
      }
    });
  }

  read(name: string): Promise<SavedApp | null> {
    return this.usage.inTurn(() => this.apps.read(name));
  }

  summaries(names: readonly string[]): Promise<SavedAppSummary[]> {
    return this.usage.inTurn(() => this.apps.summaries(names));
  }

  names(): Promise<string[]> {
    return this.usage.inTurn(() => this.apps.names());
  }

  remove(name: string): Promise<boolean> {
    return this.usage.inTurn(() => this.apps.remove(name));
  }

  sizeOf(name: string): Promise<number> {
    return this.usage.inTurn(() => this.apps.sizeOf(name));
  }

  usedBytes(): Promise<number> {
    return this.usage.inTurn(() => this.apps.usedBytes());
  }
}

function jsonBytes(value: JsonValue): number {
  return Buffer.byteLength(JSON.stringify(value));
}
