/**
 * Waiting without a connection per waiter: one subscriber connection per store (a
 * duplicate of its command connection) listens on the wake channels (./keys.ts) that
 * this process's waiters watch, and fans each wake-up out to them.
 *
 * Invariants, which make the contract of ChangeSubscription (../store.ts) hold:
 * - a subscription remembers a wake-up until it is waited for;
 * - a waiter's first read may run before Redis has confirmed the subscription (the
 *   read goes over the other connection), so the confirmation itself counts as a
 *   change: the waiter reads again once nothing can be missed any more; a waiter that
 *   joins a channel already confirmed needs no such extra read;
 * - when the subscriber connection drops or comes back, every waiter is woken: what
 *   was published meanwhile is lost, so it must read again (and a read while Redis is
 *   away fails at once with a clear error, which ends a long-poll instead of leaving it
 *   hanging); a subscription that failed meanwhile is asked for again;
 * - a channel nobody waits on any more stays subscribed for {@link LINGER_MS}, so that a
 *   long-poll loop that re-arms at once does not unsubscribe and subscribe every time;
 * - once Redis refuses a wake-up (a publish or a subscription: an ACL user without the
 *   rights to the wake channels), wake-ups cannot be counted on: every waiter reads
 *   again at least every {@link UNWOKEN_FALLBACK_WAKE_MS}, for the life of the hub, and
 *   the refusal is reported once with the grant that ends it.
 */
import { ErrorReply } from "@redis/client";
import type { ChangeSubscription, WakeReason } from "../store.js";
import type { RedisConnection, StoreClient } from "./connection.js";

/**
 * How often a waiter on the Redis store reads again without a wake-up, by default: only a
 * safety net, since a wake-up is not missed while connected and every waiter is woken
 * when the connection comes back.
 */
export const REDIS_FALLBACK_WAKE_MS = 30_000;

/** How long a channel with no waiter stays subscribed. */
export const LINGER_MS = 10_000;

/** How long a closed hub waits for a subscription on its way before it closes the subscriber connection all the same. */
const CLOSE_WAIT_MS = 2_000;

/** How often a waiter reads again once Redis has refused a wake-up: the store then works as a polling one. */
export const UNWOKEN_FALLBACK_WAKE_MS = 1_000;

/** One waiter. */
class Waiter implements ChangeSubscription {
  private pending = false;
  private wake: (() => void) | undefined;

  /**
   * @param leave called by {@link close}.
   * @param longestWait the longest a wait may last now (shorter once wake-ups are refused).
   */
  constructor(
    private readonly leave: (waiter: Waiter) => void,
    private readonly longestWait: (maxMs: number) => number,
  ) {}

  /** Records a change, waking the waiter if it waits. */
  notify(): void {
    this.pending = true;
    this.wake?.();
  }

  next(maxMs: number, signal?: AbortSignal): Promise<WakeReason> {
    if (signal?.aborted) return Promise.resolve("aborted");
    if (this.pending) {
      this.pending = false;
      return Promise.resolve("changed");
    }
    return new Promise((resolve) => {
      const finish = (reason: WakeReason) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.wake = undefined;
        if (reason === "changed") this.pending = false;
        resolve(reason);
      };
      const onAbort = () => finish("aborted");
      const timer = setTimeout(() => finish("timeout"), this.longestWait(maxMs));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.wake = () => finish("changed");
    });
  }

  close(): void {
    this.wake = undefined;
    this.leave(this);
  }
}

/** The waiters of one wake channel. */
interface Channel {
  waiters: Set<Waiter>;
  /** Whether Redis confirmed the subscription. */
  confirmed: boolean;
  /** Whether a subscription is on its way (asked for, neither confirmed nor failed). */
  subscribing: boolean;
  /** The timer that unsubscribes a channel nobody waits on. */
  linger?: NodeJS.Timeout;
}

/** The subscriber connection of one store and its waiters. */
export class WakeHub {
  private readonly channels = new Map<string, Channel>();
  /** The subscriptions asked for and neither confirmed nor failed yet. */
  private readonly asking = new Set<Promise<unknown>>();
  private subscriber: StoreClient | undefined;
  /** Settles once the subscriber client has connected (a cluster client: found the cluster), or failed to for good. */
  private clusterFound: Promise<void> = Promise.resolve();
  private readonly stopWatching: () => void;
  private closed = false;
  /** Set once Redis refused a wake-up: waits are then capped at {@link UNWOKEN_FALLBACK_WAKE_MS}. */
  private refused = false;
  private readonly longestWait = (maxMs: number): number => (this.refused ? Math.min(maxMs, UNWOKEN_FALLBACK_WAKE_MS) : maxMs);

  /**
   * @param connection the store's command connection (duplicated for subscribing, and watched for outages).
   * @param warn where a refused wake-up is reported, once. Default: nowhere.
   */
  constructor(
    private readonly connection: RedisConnection,
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    // An outage or a recovery of Redis wakes everyone (see the invariants above). The
    // subscriber connection shares the command connection's fate: same server, same network.
    this.stopWatching = connection.onStateChange(() => this.wakeAll());
  }

  /** Whether Redis has refused a wake-up of this store (waiters then read again every {@link UNWOKEN_FALLBACK_WAKE_MS}). */
  get wakeupsRefused(): boolean {
    return this.refused;
  }

  /**
   * Redis refused a wake-up (`reason`, in Redis's words): from now on every waiter reads
   * again at least every {@link UNWOKEN_FALLBACK_WAKE_MS}, and those waiting now at once.
   * Reported once, with the grant that ends it.
   */
  refuse(reason: string): void {
    if (this.refused || this.closed) return;
    this.refused = true;
    this.warn(wakeRefusalMessage(this.connection.shown, this.connection.user, reason));
    this.wakeAll();
  }

  /** Subscribes to wake-ups on `channel` (a wake channel of ./keys.ts). */
  listen(channel: string): ChangeSubscription {
    if (this.closed) return new Waiter(() => undefined, this.longestWait);
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { waiters: new Set(), confirmed: false, subscribing: false };
      this.channels.set(channel, entry);
      this.subscribe(channel, entry);
    }
    clearTimeout(entry.linger);
    entry.linger = undefined;
    const waiter = new Waiter((left) => this.leave(channel, left), this.longestWait);
    entry.waiters.add(waiter);
    return waiter;
  }

  /**
   * Stops every subscription and closes the subscriber connection: at once, or, on a
   * cluster while a subscription is on its way, once it has come or failed (at most
   * {@link CLOSE_WAIT_MS} later). node-redis leaves open a node connection destroyed while
   * its socket is still connecting, and a cluster client makes one for a subscription (to
   * the node that owns its slot) out of the hub's reach: left open, it would keep the
   * process alive. (One node's subscriber connection is the hub's own: see {@link connect}.)
   */
  close(): void {
    this.closed = true;
    this.stopWatching();
    for (const entry of this.channels.values()) clearTimeout(entry.linger);
    this.channels.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber === undefined) return;
    if (this.asking.size === 0 || !this.connection.isCluster) {
      subscriber.destroy();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
    void Promise.race([Promise.allSettled(this.asking), waited]).then(() => {
      clearTimeout(timer);
      subscriber.destroy();
    });
  }

  /** How many wake channels are subscribed now (for tests and the bench). */
  get subscribedChannels(): number {
    return this.channels.size;
  }

  private subscribe(channel: string, entry: Channel): void {
    entry.subscribing = true;
    // Which client subscribes (one node's, or the cluster's) is known once Redis first answered.
    void this.connection.modeKnown().then(() => {
      if (this.closed || this.channels.get(channel) !== entry) return;
      this.subscribeNow(channel, entry);
    });
  }

  private subscribeNow(channel: string, entry: Channel): void {
    const subscriber = this.connect();
    const confirmed = () => {
      entry.subscribing = false;
      if (this.channels.get(channel) !== entry) return;
      entry.confirmed = true;
      for (const waiter of entry.waiters) waiter.notify();
    };
    const failed = (error: unknown) => {
      // node-redis forgets a subscription that failed (it timed out in the offline queue
      // during an outage, say): it is asked for again when the connection is next ready,
      // and meanwhile the waiters read again (and then on their fallback timer). One Redis
      // refused outright (NOPERM: the user lacks the channel's rights) will not come: the
      // waiters read on a short timer instead.
      entry.subscribing = false;
      if (error instanceof ErrorReply && /^NOPERM\b/.test(error.message)) this.refuse(error.message);
      for (const waiter of entry.waiters) waiter.notify();
    };
    // Queued by node-redis until the subscriber connection is ready (a cluster client
    // queues nothing before it has found the cluster: it is asked once it has); once
    // confirmed, made again by node-redis after every reconnection.
    const asked = this.connection.isCluster
      ? this.clusterFound.then(() => {
          if (this.closed) throw new Error("the store was closed");
          return subscriber.sSubscribe(channel, this.onMessage);
        })
      : subscriber.sSubscribe(channel, this.onMessage);
    this.asking.add(asked);
    asked.then(confirmed, failed).finally(() => this.asking.delete(asked));
  }

  /**
   * The subscriber connection is ready (again): asks again for the subscriptions that
   * failed, and wakes every waiter. On a cluster the node that is ready may be a slot's
   * new primary (a failover, a slot moved), where node-redis subscribes again without
   * saying when that is confirmed: every subscription is asked for again, and counts as
   * a change once confirmed, so that no wake-up published before it is missed.
   */
  private readonly onReady = (): void => {
    if (this.closed) return;
    for (const [channel, entry] of this.channels) {
      if (this.connection.isCluster) entry.confirmed = false;
      if (!entry.confirmed && !entry.subscribing) this.subscribe(channel, entry);
    }
    this.wakeAll();
  };

  private readonly onMessage = (_message: string, channel: string): void => {
    const entry = this.channels.get(channel);
    if (entry?.confirmed) for (const waiter of entry.waiters) waiter.notify();
  };

  private leave(channel: string, waiter: Waiter): void {
    const entry = this.channels.get(channel);
    if (!entry?.waiters.delete(waiter) || entry.waiters.size > 0 || this.closed) return;
    entry.linger = setTimeout(() => {
      if (entry.waiters.size > 0 || this.channels.get(channel) !== entry) return;
      this.channels.delete(channel);
      this.subscriber?.sUnsubscribe(channel, this.onMessage).catch(() => undefined);
    }, LINGER_MS);
    entry.linger.unref();
  }

  private wakeAll(): void {
    for (const entry of this.channels.values()) for (const waiter of entry.waiters) waiter.notify();
  }

  /** The subscriber connection, made on first use. */
  private connect(): StoreClient {
    if (this.subscriber) return this.subscriber;
    // The offline queue stays on here: a subscription asked for while Redis is away is
    // made when it returns, and node-redis renews every subscription after a reconnection
    // (on a cluster, on the node that owns the channel's slot, following it when it moves).
    const subscriber = this.connection.subscriber(`${this.connection.name}:wake`);
    subscriber.on("error", () => undefined);
    subscriber.on("ready", this.onReady);
    // node-redis finishes a connection that was destroyed while it was being made, and the
    // open socket would keep the process alive (a watcher that found its message at once
    // never exited): one that comes up after close() is destroyed then.
    this.clusterFound = subscriber.connect().then(
      () => {
        if (this.subscriber !== subscriber) subscriber.destroy();
      },
      () => undefined,
    );
    this.subscriber = subscriber;
    return subscriber;
  }
}

/**
 * What a store says when Redis refuses its wake-ups: what it means, and the grant that
 * ends it (Redis 7 gives a new ACL user no pub/sub channel; `&` patterns cover sharded
 * channels too).
 */
export function wakeRefusalMessage(shown: string, user: string, reason: string): string {
  return (
    `the Redis user ${JSON.stringify(user)} of ${shown} may not publish or subscribe on backchannel's wake channels (${reason}): ` +
    `messages are kept and delivered, but waiting calls read again every ${UNWOKEN_FALLBACK_WAKE_MS / 1000} s instead of being woken. ` +
    `Grant the channels: ACL SETUSER ${user} &bc:* (or allchannels), then restart backchannel`
  );
}
