/**
 * One connection to Redis for a store's commands and scripts (node-redis pipelines the
 * calls of the whole process on it), with what makes an outage clear rather than slow:
 *
 * - the client connects in the background and reconnects by itself, quickly (back-off
 *   capped at half a second);
 * - commands are never queued while Redis is away (`disableOfflineQueue`): once an
 *   attempt to connect has failed, a call waits at most `readyWaitMs` from the start of
 *   the outage, and once an outage has lasted that long, every call fails at once with a
 *   {@link StoreUnavailableError} naming the store; a first connection that is only slow
 *   (a busy machine, a TLS handshake far away) is waited for up to the command timeout;
 * - a call that Redis does not answer within `readyWaitMs` on a connection that looks up
 *   (a stopped server, a partition without a reset) starts an outage too: it fails, the
 *   connection is remade, and calls fail at once until Redis answers again;
 * - an outage and the recovery are reported once each through `warn`, never per retry;
 * - an error reply of Redis becomes a {@link StoreRefusedError} with Redis's own words, but
 *   OOM (Redis at its maxmemory) a {@link StoreFullError} that says what still works;
 * - a reply that says "not now" (LOADING, TRYAGAIN while a slot moves, CLUSTERDOWN for
 *   the second or two of a failover, …: ./replicated.ts `NOT_NOW_REPLIES`) means the
 *   command did not run: it is sent again until the ready wait is spent;
 * - the node the URL names is asked whether it is in cluster mode (`INFO cluster`) before
 *   any call goes out: a cluster node makes the connection node-redis's cluster client
 *   (every node found from that one, commands routed by their keys' slot, MOVED and ASK
 *   followed, SCAN chained over every primary). On a cluster a node that fails fails
 *   only the calls to its slots (each within the ready wait), never the whole store;
 * - a change goes through {@link RedisConnection.change}: to the primary of its slot,
 *   answered once the replicas have it (./replicated.ts).
 */
import { createClient, createCluster, ErrorReply } from "@redis/client";
import { callerErrorCode } from "../../core/errors.js";
import { StoreFullError, StoreRefusedError, StoreUnavailableError } from "./errors.js";
import type { RedisAddress } from "./location.js";
import { NOT_NOW_REPLIES, notRun, pause, type ReplicaSetting, ReplicatedChanges, type Router, replyCode, type WireCommand } from "./replicated.js";
import { SCRIPTS } from "./scripts.js";

/** Options of {@link RedisConnection}. */
export interface ConnectionOptions {
  /** Where Redis is. */
  address: RedisAddress;
  /** The client's name in `CLIENT LIST`, e.g. `backchannel:store`. */
  name: string;
  /** Where the outage and recovery notes go; none: nothing is reported. */
  warn?: (message: string) => void;
  /** How long a call waits, from the start of an outage, for a connection being remade before it fails. Default 2,000 ms. */
  readyWaitMs?: number;
  /** How long one command, or a first connection that has not failed, may take before it fails. Default 5,000 ms (node-redis's default). */
  commandTimeoutMs?: number;
  /** How many replicas must have a change before it is answered (./replicated.ts). Default `"all"`: every replica online. */
  replicas?: ReplicaSetting;
}

/** The node-redis client of a store, with the store's scripts as methods: one node's, or a Redis Cluster's. */
export type StoreClient = ReturnType<typeof createStoreClient> | ReturnType<typeof createStoreCluster>;

/** Longest pause between two attempts to reconnect. */
const MAX_RECONNECT_PAUSE_MS = 500;

function createStoreClient(options: ConnectionOptions) {
  return createClient({
    url: options.address.url,
    name: options.name,
    RESP: 3,
    scripts: SCRIPTS,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? 5000 },
    socket: {
      connectTimeout: options.commandTimeoutMs ?? 5000,
      reconnectStrategy: (retries: number) => Math.min(25 * 2 ** retries, MAX_RECONNECT_PAUSE_MS) + Math.floor(Math.random() * 50),
    },
  });
}

/**
 * The cluster client for the cluster whose node `options.address` names: every node is
 * reached with the URL's user, password and TLS; a topology refresh follows a node that
 * stopped answering within a quarter second (a failover then routes its slots to the
 * promoted replica).
 */
function createStoreCluster(options: ConnectionOptions) {
  const { address } = options;
  const url = new URL(address.url);
  return createCluster({
    rootNodes: [{ url: address.url }],
    RESP: 3,
    scripts: SCRIPTS,
    topologyRefreshOnReconnectionAttemptStrategy: 250,
    commandOptions: { timeout: options.commandTimeoutMs ?? 5000 },
    defaults: {
      name: options.name,
      ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
      ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
      disableOfflineQueue: true,
      socket: {
        ...(address.tls ? { tls: true as const } : {}),
        connectTimeout: options.commandTimeoutMs ?? 5000,
        reconnectStrategy: (retries: number) => Math.min(25 * 2 ** retries, MAX_RECONNECT_PAUSE_MS) + Math.floor(Math.random() * 50),
      },
    },
  });
}

/** A store's connection to Redis. */
export class RedisConnection {
  /** The client; use it through {@link run}, which turns failures into errors for the caller. */
  client: StoreClient;
  /** Whether the URL's node is in cluster mode; `undefined` until it has answered. */
  private clusterMode: boolean | undefined;
  private readonly options: ConnectionOptions;
  /** The store's URL without its password. */
  readonly shown: string;
  /** The Redis user the store connects as (`default` when the URL names none). */
  readonly user: string;
  /** The client's name in `CLIENT LIST`. */
  readonly name: string;
  private readonly warn: (message: string) => void;
  private readonly readyWaitMs: number;
  private readonly commandTimeoutMs: number;
  /** While not ready: since when, why, whether an attempt failed, and whether it was reported. */
  private outage: { since: number; reason: string; failed: boolean; reported: boolean } | undefined;
  private readonly readyWaiters = new Set<() => void>();
  private readonly stateListeners = new Set<(up: boolean) => void>();
  private closed = false;
  /** When the connection was last dropped because Redis stopped answering (0: never). */
  private droppedAt = 0;
  /** On a cluster: whether a node's failure was reported and its recovery not yet. */
  private nodeTrouble = false;
  /** Waiting for {@link modeKnown}. */
  private modeWaiters: (() => void)[] = [];
  /** How changes are confirmed by the replicas. */
  private readonly changes: ReplicatedChanges;

  constructor(options: ConnectionOptions) {
    this.options = options;
    this.shown = options.address.shown;
    this.user = options.address.user;
    this.name = options.name;
    this.warn = options.warn ?? (() => undefined);
    this.readyWaitMs = options.readyWaitMs ?? 2000;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 5000;
    this.outage = { since: Date.now(), reason: "still connecting", failed: false, reported: false };
    this.changes = new ReplicatedChanges(options.replicas ?? "all", this.shown, this.warn);
    const client = createStoreClient(options);
    this.client = client;
    client.on("error", (error: Error) => this.wentDown(describeFailure(error)));
    client.on("ready", () => {
      if (this.clusterMode === undefined) this.learnMode(client);
      else if (this.clusterMode === false) this.cameUp();
    });
    // connect() settles when the first connection is ready, or rejects once the client is
    // closed; failures before that arrive as "error" events, handled above. A connection
    // that comes up after close() (node-redis finishes one destroyed while being made) is
    // destroyed then, or its socket would keep the process alive.
    this.client.connect().then(
      () => {
        if (this.closed) this.client.destroy();
      },
      () => undefined,
    );
  }

  /** Whether the store is a Redis Cluster (known once Redis first answered). */
  get isCluster(): boolean {
    return this.clusterMode === true;
  }

  /** Resolves once Redis has said whether it is a cluster (at once after that), or the connection is closed. */
  modeKnown(): Promise<void> {
    if (this.clusterMode !== undefined || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.modeWaiters.push(resolve));
  }

  /**
   * A second client to the same Redis (one node, or the same cluster), for subscribing:
   * its offline queue on, so that a subscription asked for while Redis is away is made
   * when it returns. It emits `ready` whenever it (a node of it, on a cluster) is ready again.
   */
  subscriber(name: string): StoreClient {
    if (this.clusterMode !== true) return (this.client as ReturnType<typeof createStoreClient>).duplicate({ disableOfflineQueue: false, name });
    const cluster = createStoreCluster({ ...this.options, name });
    // Each node's client keeps its offline queue, and a node that is ready again counts as the whole being ready again.
    cluster.on("node-ready", () => cluster.emit("ready"));
    return cluster;
  }

  /** Whether commands can be sent now. */
  get isUp(): boolean {
    return this.outage === undefined && !this.closed;
  }

  /**
   * Calls `listener(up)` when the connection goes down or comes back (not on every retry).
   * @returns a function that removes it.
   */
  onStateChange(listener: (up: boolean) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /**
   * Runs `operation` once the connection is ready.
   * @throws StoreUnavailableError when Redis cannot be reached within the ready wait (at
   *   once when an outage has already lasted that long), or the connection fails during
   *   the call, or Redis answers "not yet" (LOADING after a restart, say); StoreFullError
   *   when Redis is at its maxmemory and refuses a write; StoreRefusedError when Redis
   *   answers with any other error; CallerError thrown by
   *   `operation` as it is.
   */
  async run<T>(operation: (client: StoreClient) => Promise<T>): Promise<T> {
    return this.within((deadline) => this.notNowAgain(() => operation(this.client), deadline));
  }

  /**
   * Runs `command` (a change) on the primary that owns its route and answers once the
   * replicas the setting asks for have it (./replicated.ts).
   * @returns its reply.
   * @throws StoreNotReplicatedError when they do not confirm it in time, or too few are
   *   online to make it; else as {@link run}.
   */
  change(command: WireCommand): Promise<unknown> {
    return this.within((deadline) => this.changes.apply(this.router(), command, deadline));
  }

  /**
   * How many replicas are connected to the store's primaries (`INFO replication` of the
   * one node, or of every primary of a cluster).
   * @throws what the command throws.
   */
  async replicaCount(): Promise<number> {
    const connected = (info: unknown) => Number(/connected_slaves:(\d+)/.exec(String(info))?.[1] ?? 0);
    if (this.clusterMode !== true) return connected(await this.run((client) => (client as ReturnType<typeof createStoreClient>).info("replication")));
    const cluster = this.client as ReturnType<typeof createStoreCluster>;
    const counts = await Promise.all(
      cluster.masters.map(async (primary) => connected(await (await cluster.nodeClient(primary)).info("replication"))),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  /** The replica setting in force. */
  get replicaSetting(): ReplicaSetting {
    return this.changes.setting;
  }

  /** Runs `operation` once the connection is ready, within the ready wait; see {@link run}. */
  private async within<T>(operation: (deadline: number) => Promise<T>): Promise<T> {
    await this.ready();
    const sentAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.stalled(sentAt)), this.readyWaitMs);
    });
    try {
      return await Promise.race([operation(sentAt + this.readyWaitMs), unanswered]);
    } catch (error) {
      // A call written before the connection was dropped for silence may still be carried out.
      if (callerErrorCode(error) === undefined && sentAt <= this.droppedAt)
        throw new StoreUnavailableError(this.shown, "the connection was dropped", true);
      throw this.explain(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `operation` again while Redis answers "not now" (it did not run) and there is time before `deadline`. */
  private async notNowAgain<T>(operation: () => Promise<T>, deadline: number): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        const wait = Math.min(25 * 2 ** attempt, 200);
        if (!(error instanceof ErrorReply && NOT_NOW_REPLIES.has(replyCode(error))) || Date.now() + wait + 150 > deadline) throw error;
        await pause(wait);
      }
    }
  }

  /** Where a change goes: the one node, or the primary of its slot on a cluster (./replicated.ts). */
  private router(): Router {
    const client = this.client;
    if (this.clusterMode !== true) {
      const node = client as ReturnType<typeof createStoreClient>;
      return { cluster: false, primaryFor: async () => node, primaryAt: async () => undefined, followMoved: async () => undefined };
    }
    const cluster = client as ReturnType<typeof createStoreCluster>;
    return {
      cluster: true,
      primaryFor: (key) => cluster.getNodeClientForKey(key, false),
      async primaryAt(address) {
        const primary = cluster.masters.find((master) => `${master.host}:${master.port}` === address);
        return primary === undefined ? undefined : cluster.nodeClient(primary);
      },
      // The cluster client follows a MOVED itself, bringing its map of slots up to date.
      followMoved: async (key) => void (await cluster.exists(key)),
    };
  }

  /**
   * Asks the node that just answered whether it is in cluster mode; on a cluster node,
   * the store's client becomes the cluster's (the node's own client is closed), and the
   * store is up once the cluster client has found the cluster.
   */
  private learnMode(node: ReturnType<typeof createStoreClient>): void {
    node.info("cluster").then(
      (info) => {
        if (this.closed) return;
        this.clusterMode = /cluster_enabled:1/.test(String(info));
        for (const wake of this.modeWaiters.splice(0)) wake();
        if (!this.clusterMode) return this.cameUp();
        if (this.options.address.db !== 0) {
          this.wentDown(`${this.shown} is a Redis Cluster node: a cluster has database 0 only; give the URL without a database number`);
          return;
        }
        node.destroy();
        const cluster = createStoreCluster(this.options);
        this.client = cluster;
        cluster.on("error", (error: Error) => this.warnNode(describeFailure(error)));
        // A node that fails, drops or comes back: waiters read again (what was published
        // meanwhile is lost), and a read of a failed node's slots ends its wait with an
        // error within the ready wait, as a single Redis's outage does.
        cluster.on("node-error", (error: Error) => {
          this.warnNode(describeFailure(error));
          this.nodeChanged(false);
        });
        cluster.on("node-disconnect", () => this.nodeChanged(false));
        cluster.on("node-ready", () => this.nodeChanged(true));
        this.connectCluster(cluster);
      },
      // An INFO refused (an ACL user without it) is taken as a single node: a cluster node's MOVED replies would say otherwise.
      (error: unknown) => {
        this.clusterMode = false;
        for (const wake of this.modeWaiters.splice(0)) wake();
        if (!(error instanceof ErrorReply))
          this.warn(`could not ask ${this.shown} whether it is a cluster node (${String(error)}); taking it as a single node`);
        this.cameUp();
      },
    );
  }

  /** Connects the cluster client, retrying every half second until the cluster is found; up once it is. */
  private connectCluster(cluster: ReturnType<typeof createStoreCluster>): void {
    cluster.connect().then(
      () => {
        if (this.closed) cluster.destroy();
        else this.cameUp();
      },
      (error: Error) => {
        if (this.closed) return;
        this.wentDown(describeFailure(error));
        setTimeout(() => this.connectCluster(cluster), MAX_RECONNECT_PAUSE_MS).unref();
      },
    );
  }

  /** A node of the cluster failed: reported once until the cluster answers again (the calls to its slots fail on their own). */
  private warnNode(reason: string): void {
    if (this.nodeTrouble || this.closed) return;
    this.nodeTrouble = true;
    this.warn(`a node of the Redis Cluster at ${this.shown} failed (${reason}); calls to its slots fail until it or its replica answers`);
  }

  /** A node of the cluster dropped (`false`) or is ready again (`true`): the state listeners hear it, as of a single node. */
  private nodeChanged(up: boolean): void {
    if (this.closed || this.outage !== undefined) return;
    if (up && this.nodeTrouble) {
      this.nodeTrouble = false;
      this.warn(`the Redis Cluster at ${this.shown} answers again`);
    }
    for (const listener of this.stateListeners) listener(up);
  }

  /** Closes the connection; calls after it fail with StoreUnavailableError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
    for (const wake of this.readyWaiters) wake();
    for (const wake of this.modeWaiters.splice(0)) wake();
  }

  /** The error a failed command becomes. */
  explain(error: unknown): Error {
    if (callerErrorCode(error) !== undefined) return error as Error;
    if (error instanceof ErrorReply) {
      // A Redis error reply starts with its error code, one upper-case word (RESP "simple errors").
      const code = replyCode(error);
      if (code === "OOM") return new StoreFullError(this.shown);
      // A reply that says the command did not run (not now, or not here) is an unavailable store, not a refusal.
      return notRun(error) !== undefined ? new StoreUnavailableError(this.shown, error.message) : new StoreRefusedError(this.shown, error.message);
    }
    if (error instanceof Error) return new StoreUnavailableError(this.shown, describeFailure(error));
    return new StoreUnavailableError(this.shown, String(error));
  }

  /** Resolves when the connection is ready; throws StoreUnavailableError when it will not be soon. */
  private async ready(): Promise<void> {
    for (;;) {
      if (this.closed) throw new StoreUnavailableError(this.shown, "the store was closed");
      const outage = this.outage;
      if (outage === undefined) return;
      const left = outage.since + (outage.failed ? this.readyWaitMs : this.commandTimeoutMs) - Date.now();
      if (left <= 0) throw new StoreUnavailableError(this.shown, outage.reason);
      // Woken when the connection comes up or an attempt fails (which may shorten the wait).
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.readyWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.readyWaiters.add(done);
      });
    }
  }

  /**
   * A call sent at `sentAt` has had no answer for the ready wait, on a connection that
   * looks up: Redis stopped (SIGSTOP, a frozen VM) or a partition without a reset keeps
   * the socket open, and node-redis times out only commands it has not yet written, so
   * without this every call would wait for ever. It counts as an outage from `sentAt`:
   * the connection is dropped (the calls written on it fail now) and remade in the
   * background, and it is up again only once Redis answers the new one.
   */
  private stalled(sentAt: number): StoreUnavailableError {
    const reason = `no answer for ${this.readyWaitMs} ms`;
    // On a cluster one node's silence is that node's: its client reconnects by itself, and a failover moves its slots.
    if (this.outage === undefined && !this.closed && this.clusterMode !== true) {
      this.wentDown(reason, sentAt);
      this.droppedAt = Date.now();
      this.client.destroy();
      this.client.connect().catch(() => undefined);
    }
    return new StoreUnavailableError(this.shown, reason, true);
  }

  /** Records an outage that began at `since` (default now), or a new reason for the current one. */
  private wentDown(reason: string, since = Date.now()): void {
    if (this.closed) return;
    if (this.outage) {
      this.outage.reason = reason;
      this.outage.failed = true;
    } else {
      this.outage = { since, reason, failed: true, reported: false };
      for (const listener of this.stateListeners) listener(false);
    }
    for (const wake of this.readyWaiters) wake();
    // Reported once per outage, not once per retry, and not for a blip shorter than a retry.
    if (!this.outage.reported) {
      this.outage.reported = true;
      this.warn(`cannot reach the Redis store at ${this.shown} (${reason}); retrying, and calls fail until it answers`);
    }
  }

  private cameUp(): void {
    if (this.closed) {
      this.client.destroy();
      return;
    }
    const outage = this.outage;
    this.outage = undefined;
    if (outage?.reported) this.warn(`the Redis store at ${this.shown} answers again`);
    for (const wake of this.readyWaiters) wake();
    if (outage) for (const listener of this.stateListeners) listener(true);
  }
}

/** A connection failure in a few words, e.g. `connect ECONNREFUSED 127.0.0.1:6379`. */
export function describeFailure(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error.message || error.name;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
