/**
 * Changes the replicas confirm (docs/ARCHITECTURE.md, "The Redis store"). Redis
 * replicates asynchronously: a primary that answers a change and dies before a replica
 * has it loses the change at the failover, and the promoted replica hands its seq out
 * again. So the store answers a change, and a read that returns messages, only once the
 * replicas have it: the command goes to the primary that owns its keys, followed on the
 * same connection by `WAIT <replicas> <timeout>`, which counts the replicas that have
 * everything that connection wrote.
 *
 * Which replicas must have it ({@link ReplicaSetting}, "all" by default): on a Redis
 * Cluster, every replica the cluster lists for the primary that could still be promoted
 * in its place: one cut off from it a moment ago included (a replica the cluster marked
 * failed is promoted all the same once it is back, while its data is recent enough),
 * one not heard from for longer than Redis's own limit for a promotion not. A change is
 * refused, before anything is written, while one of them is not in sync with the
 * primary. On a single Redis (no automatic failover), every replica in sync when the
 * change is made.
 *
 * Invariants:
 * - a command and its WAIT are queued in one turn of the event loop on one node client
 *   whose offline queue is off: they go out on one socket, in that order, or both fail
 *   (a WAIT on a new connection would count nothing of what the old one wrote);
 * - a read that returns messages writes (it marks its channel used, ./scripts.ts), so
 *   that its WAIT covers what it returned: no reader holds a message a promoted replica
 *   lacks, so no seq a reader has seen is handed out again;
 * - a command Redis did not run (a redirection, a slot being moved, a cluster without a
 *   primary for the slot yet, a node loading, a script not in a node's cache, a node not
 *   connected) is sent again until the time given is spent; one that may have run (a
 *   connection lost with the command written) never is.
 */
import { ClientClosedError, ClientOfflineError, ErrorReply } from "@redis/client";
import { StoreNotReplicatedError } from "./errors.js";

/**
 * How many replicas must hold a change before the store answers it: `"all"` (every
 * replica that could take the primary's place; none where it has none), or a number
 * (at least that many; `0`, none: Redis's own asynchronous replication).
 */
export type ReplicaSetting = "all" | number;

/** The environment variable that sets {@link ReplicaSetting}: `all` (the default) or a whole number. */
export const REPLICAS_ENV_VAR = "BACKCHANNEL_REDIS_REPLICAS";

/** How long a WAIT waits for the replicas, at most: half the ready wait, so that a call still ends within it. */
export const REPLICA_WAIT_MS = 1000;

/**
 * A replica counts as online while it is in sync with its primary (`state=online`) and
 * has acknowledged the replication stream within this many seconds (it does every
 * second); one cut off without a reset stops counting after that.
 */
const ONLINE_LAG_LIMIT_S = 3;

/** The shortest time left in which another attempt is made, and the pause between attempts. */
const MIN_ATTEMPT_MS = 150;
const RETRY_PAUSE_MS = 25;

/**
 * The replica setting of `env` ({@link REPLICAS_ENV_VAR}); unset or empty: `"all"`.
 * @throws Error, naming the variable, for anything but `all` or a whole number from 0 to 100.
 */
export function replicaSettingFromEnv(env: NodeJS.ProcessEnv = process.env): ReplicaSetting {
  const raw = env[REPLICAS_ENV_VAR]?.trim() ?? "";
  if (raw === "" || raw.toLowerCase() === "all") return "all";
  if (/^[0-9]{1,3}$/.test(raw) && Number(raw) <= 100) return Number(raw);
  throw new Error(
    `${REPLICAS_ENV_VAR}=${JSON.stringify(raw.slice(0, 40))} is not "all" or a number of replicas from 0 to 100; unset it (every replica online confirms each change) or fix it`,
  );
}

/** The replicas online in the text of `INFO replication` (see {@link ONLINE_LAG_LIMIT_S}). */
export function onlineReplicas(info: string): number {
  let online = 0;
  for (const line of info.split(/\r?\n/)) {
    const fields = /^slave\d+:(.*)$/.exec(line)?.[1];
    if (fields === undefined) continue;
    const values = new Map(fields.split(",").map((pair) => pair.split("=", 2) as [string, string]));
    if (values.get("state") === "online" && Number(values.get("lag") ?? Infinity) <= ONLINE_LAG_LIMIT_S) online += 1;
  }
  return online;
}

/** One node's connection as the store uses it: node-redis's client, with its offline queue off. */
export interface NodeConnection {
  sendCommand(args: string[]): Promise<unknown>;
}

/** Where a command goes: the primary that owns a key, and how a redirection is followed. */
export interface Router {
  /** Whether the store is a Redis Cluster. */
  readonly cluster: boolean;
  /** The connection to the primary that owns `key`'s slot, as the client knows it now. */
  primaryFor(key: string): Promise<NodeConnection>;
  /** The connection to the primary at `address` (`host:port`, as ASK names it), if the client knows it. */
  primaryAt(address: string): Promise<NodeConnection | undefined>;
  /** After a MOVED: brings the client's map of slots up to date for `key`. */
  followMoved(key: string): Promise<void>;
}

/** A command that changes the store, as sent on the wire. */
export interface WireCommand {
  /** A key of the command: every key it names shares this one's slot. */
  route: string;
  args: string[];
  /** For `EVALSHA`: the script's source, loaded into a node that does not have it. */
  source?: string;
  /** Whether `reply` says something was written that the replicas must confirm. Default: always. */
  confirm?: (reply: unknown) => boolean;
  /**
   * What an unconfirmed change gives: `"throw"` (default), a StoreNotReplicatedError; or
   * `"return"`, its reply all the same (a read and clear, which failing would lose).
   */
  unconfirmed?: "throw" | "return";
  /** What the change is, for the error, from its reply: e.g. "the append of seq 12", "the read of seq 3 to 5". Default "the change". */
  describe?: (reply: unknown) => string;
  /** Whether the command is a read (its messages are not returned unconfirmed: the reader polls again). Default false. */
  read?: boolean;
}

/** Why a command was not run, from what it failed with; `undefined` when it may have run (or was refused for good). */
export type NotRun = { kind: "moved" } | { kind: "ask"; address: string } | { kind: "noscript" } | { kind: "again" };

/**
 * Error replies that mean "not now" rather than "no": a server still loading its data
 * after a restart, a script running too long, a replica without its primary, a slot
 * being moved, a cluster without a primary for some slot (for a second or two of a
 * failover). The command did not run, and the same command succeeds once Redis is ready.
 */
export const NOT_NOW_REPLIES: ReadonlySet<string> = new Set(["LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN"]);

/** The first word of an error reply (its RESP error code), e.g. `MOVED`. */
export function replyCode(error: ErrorReply): string {
  return error.message.split(" ", 1)[0]!;
}

/** Whether `error` says its command did not run (see {@link NotRun}). */
export function notRun(error: unknown): NotRun | undefined {
  if (error instanceof ClientOfflineError || error instanceof ClientClosedError) return { kind: "again" };
  if (!(error instanceof ErrorReply)) return undefined;
  const code = replyCode(error);
  if (code === "MOVED") return { kind: "moved" };
  if (code === "ASK") return { kind: "ask", address: error.message.slice(error.message.lastIndexOf(" ") + 1) };
  if (code === "NOSCRIPT") return { kind: "noscript" };
  return NOT_NOW_REPLIES.has(code) ? { kind: "again" } : undefined;
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What the store knows of one primary's replicas. */
interface NodeReplicas {
  /** Those in sync with it, as its `INFO replication` said at the last change (undefined: not asked yet). */
  online?: number;
  /** On a cluster: those the cluster lists for it and does not take as failed, and when that was asked. */
  listed?: { count: number; at: number };
  /** On a cluster: its node id, and how long after a replica was last heard from it may still be promoted. */
  id?: string;
  window?: number;
}

/** How long a primary's listed replicas are taken as known. */
const LISTED_FOR_MS = 1000;

/** Runs a store's changes so that its replicas confirm them, as {@link ReplicaSetting} asks. */
export class ReplicatedChanges {
  private readonly nodes = new WeakMap<NodeConnection, NodeReplicas>();
  /** What Redis refused to tell (INFO, CLUSTER REPLICAS), reported once each. */
  private readonly refusals = new Set<string>();

  /**
   * @param setting how many replicas must confirm.
   * @param shown the store's URL without its password, for errors.
   * @param warn where a Redis that will not say its replicas (`INFO` refused) is reported, once.
   */
  constructor(
    readonly setting: ReplicaSetting,
    private readonly shown: string,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Sends `command` to the primary `router` names for its route, and answers once the
   * replicas the setting asks for have it. A change (not a read) is refused before it
   * is sent while fewer of them are in sync with the primary than it needs.
   * @param deadline when no further attempt starts (ms since the epoch); a WAIT ends before it.
   * @returns the command's reply.
   * @throws StoreNotReplicatedError when the replicas did not confirm it in time (it was
   *   made), or too few are in sync to make it (nothing was written); else what the
   *   command failed with (an ErrorReply, a connection error), for the caller to explain.
   */
  async apply(router: Router, command: WireCommand, deadline: number): Promise<unknown> {
    let target: NodeConnection | undefined;
    let asking = false;
    for (let attempt = 0; ; attempt++) {
      let node: NodeConnection;
      let needed: number;
      let online: number;
      try {
        node = target ?? (await router.primaryFor(command.route));
        ({ needed, online } = await this.replicasOf(node, router.cluster));
      } catch (error) {
        // No primary known for the slot yet, or it does not answer (a cluster being found,
        // a failover): nothing was sent, so it is tried again.
        const sendable = notRun(error) !== undefined || !(error instanceof ErrorReply);
        if (!sendable || !(await this.again(attempt, deadline))) throw error;
        continue;
      }
      const short = online < needed;
      if (short && !command.read) throw new StoreNotReplicatedError(this.shown, { online, needed });
      const [info, reply, waited] = await Promise.allSettled(this.send(node, command.args, short ? 0 : needed, asking, deadline));
      if (reply.status === "rejected") {
        const why = notRun(reply.reason);
        if (why === undefined || Date.now() + MIN_ATTEMPT_MS > deadline) throw reply.reason;
        if (why.kind === "noscript" && command.source !== undefined) {
          await node.sendCommand(["SCRIPT", "LOAD", command.source]);
          continue;
        }
        ({ target, asking } = await this.redirect(router, command.route, why));
        // A first redirection is followed at once; anything else after a pause.
        if ((why.kind === "again" || attempt > 1) && !(await this.again(attempt, deadline))) throw reply.reason;
        continue;
      }
      this.noteOnline(node, info);
      if (needed === 0 || !(command.confirm?.(reply.value) ?? true)) return reply.value;
      const confirmed = !short && waited.status === "fulfilled" ? Number(waited.value) : 0;
      if (confirmed >= needed || command.unconfirmed === "return") return reply.value;
      const what = command.describe?.(reply.value) ?? "the change";
      throw new StoreNotReplicatedError(this.shown, { what, confirmed, needed, waitMs: REPLICA_WAIT_MS, read: command.read ?? false });
    }
  }

  /**
   * How many replicas of the primary on `node` must have a change (`needed`), and how
   * many are in sync with it (`online`; asked again while fewer, or when never asked).
   * With "all": on a cluster, every replica that could be promoted in the primary's
   * place ({@link listed}); on one Redis, every replica in sync with it.
   */
  private async replicasOf(node: NodeConnection, cluster: boolean): Promise<{ needed: number; online: number }> {
    if (this.setting === 0) return { needed: 0, online: 0 };
    const known = this.nodes.get(node) ?? {};
    this.nodes.set(node, known);
    known.online ??= await this.askOnline(node);
    if (this.setting === "all" && !cluster) return { needed: known.online, online: known.online };
    const needed = this.setting === "all" ? await this.listed(node, known) : this.setting;
    if (known.online < needed) known.online = await this.askOnline(node);
    return { needed, online: known.online };
  }

  /** The replicas in sync with the primary on `node`, asked now. */
  private async askOnline(node: NodeConnection): Promise<number> {
    const [info] = await Promise.allSettled([node.sendCommand(["INFO", "replication"])]);
    return this.onlineOf(info!);
  }

  /**
   * The replicas the cluster lists for the primary on `node` that could be promoted in
   * its place: every one but those it has not heard from for longer than
   * {@link promotionWindow} (asked again after {@link LISTED_FOR_MS}).
   */
  private async listed(node: NodeConnection, known: NodeReplicas): Promise<number> {
    if (known.listed !== undefined && Date.now() - known.listed.at < LISTED_FOR_MS) return known.listed.count;
    try {
      known.id ??= String(await node.sendCommand(["CLUSTER", "MYID"])).trim();
      known.window ??= await this.promotionWindow(node);
      const [replicas, time] = await Promise.all([node.sendCommand(["CLUSTER", "REPLICAS", known.id]), node.sendCommand(["TIME"])]);
      // The primary's own clock: `TIME` is [seconds, microseconds].
      const [seconds, micros] = (time as unknown[]).map(Number) as [number, number];
      const now = seconds * 1000 + micros / 1000;
      // <id> <ip:port@cport> <flags> <primary> <ping-sent> <pong-received, ms> …
      const count = String(replicas)
        .split("\n")
        .filter((line) => line.trim() !== "")
        .filter((line) => now - Number(line.split(" ")[5]) < known.window!).length;
      known.listed = { count, at: Date.now() };
      return count;
    } catch (error) {
      if (!(error instanceof ErrorReply)) throw error;
      // Not a primary any more (the command then gets MOVED), or a user without the right: those in sync count.
      this.refused("CLUSTER REPLICAS", error);
      return known.online ?? 0;
    }
  }

  /**
   * How long after it was last heard from a replica may still be promoted (Redis
   * Cluster's own rule: its data is at most `cluster-node-timeout` ×
   * (`cluster-replica-validity-factor` + 1) + `repl-ping-replica-period` old), with one
   * node timeout more for the time it took the primary to notice; for ever where the
   * factor is 0 or the settings cannot be read.
   */
  private async promotionWindow(node: NodeConnection): Promise<number> {
    try {
      const settings = new Map<string, number>();
      for (const name of ["cluster-node-timeout", "cluster-replica-validity-factor", "repl-ping-replica-period"]) {
        const reply = (await node.sendCommand(["CONFIG", "GET", name])) as unknown;
        const value = reply instanceof Map ? reply.get(name) : Array.isArray(reply) ? reply[1] : (reply as Record<string, unknown>)[name];
        settings.set(name, Number(value));
      }
      const timeout = settings.get("cluster-node-timeout")!;
      const factor = settings.get("cluster-replica-validity-factor")!;
      const ping = settings.get("repl-ping-replica-period")!;
      if (![timeout, factor, ping].every(Number.isFinite) || factor === 0) return Infinity;
      return timeout * (factor + 2) + ping * 1000;
    } catch {
      return Infinity;
    }
  }

  /**
   * Queues, in this turn of the event loop: `INFO replication`, `ASKING` (after an ASK),
   * the command, and `WAIT` for `waitFor` replicas (none for 0).
   */
  private send(node: NodeConnection, args: string[], waitFor: number, asking: boolean, deadline: number) {
    const info = this.setting === 0 ? Promise.resolve("") : node.sendCommand(["INFO", "replication"]);
    const ask = asking ? node.sendCommand(["ASKING"]) : undefined;
    const reply = node.sendCommand(args);
    const waited = waitFor > 0 ? node.sendCommand(["WAIT", String(waitFor), String(waitMs(deadline))]) : Promise.resolve(0);
    ask?.catch(() => undefined);
    return [info, reply, waited] as const;
  }

  /** Keeps what a change's `INFO replication` said of the replicas in sync. */
  private noteOnline(node: NodeConnection, info: PromiseSettledResult<unknown>): void {
    const known = this.nodes.get(node);
    if (known !== undefined && this.setting !== 0) known.online = this.onlineOf(info);
  }

  /** The replicas in sync in a reply to `INFO replication`; none when Redis refused it (reported once). */
  private onlineOf(info: PromiseSettledResult<unknown>): number {
    if (info.status === "fulfilled") return onlineReplicas(String(info.value));
    if (info.reason instanceof ErrorReply) this.refused("INFO", info.reason);
    return 0;
  }

  /** Reports once that Redis refused `command`, which the store needs to count replicas. */
  private refused(command: string, error: ErrorReply): void {
    if (this.refusals.has(command) || /^MOVED|^ERR .*not a master/i.test(error.message)) return;
    this.refusals.add(command);
    this.warn(
      `the Redis store at ${this.shown} refused ${command} (${error.message}), which backchannel uses to count the replicas that must have each change; ` +
        `grant the user +info and +cluster|replicas (or +@all), or set ${REPLICAS_ENV_VAR} to a number of replicas`,
    );
  }

  /** Where the next attempt goes after `why`: the ASK's target (with ASKING), else wherever the client's map says. */
  private async redirect(router: Router, route: string, why: NotRun): Promise<{ target: NodeConnection | undefined; asking: boolean }> {
    if (why.kind === "moved") await router.followMoved(route).catch(() => undefined);
    if (why.kind !== "ask") return { target: undefined, asking: false };
    const target = await router.primaryAt(why.address);
    // A node the client does not know yet: its map is brought up to date, and the next attempt is redirected again.
    if (target === undefined) await router.followMoved(route).catch(() => undefined);
    return { target, asking: target !== undefined };
  }

  /** Pauses before another attempt; false when there is no time for one. */
  private async again(attempt: number, deadline: number): Promise<boolean> {
    const wait = Math.min(RETRY_PAUSE_MS * 2 ** Math.min(attempt, 3), 200);
    if (Date.now() + wait + MIN_ATTEMPT_MS > deadline) return false;
    await pause(wait);
    return true;
  }
}

/** A WAIT's timeout: {@link REPLICA_WAIT_MS}, or less, so that it ends before `deadline`. */
function waitMs(deadline: number): number {
  return Math.max(1, Math.min(REPLICA_WAIT_MS, deadline - Date.now() - 50));
}
