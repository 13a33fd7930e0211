/**
 * Changes the replicas confirm (docs/ARCHITECTURE.md, "The Redis store"). Redis
 * replicates asynchronously: a primary that answers a change and dies before a replica
 * has it loses the change at the failover, and the promoted replica hands its seq out
 * again. So the store answers a change, and a read that returns messages, only once the
 * replicas have it: the command goes to the primary that owns its keys, followed on the
 * same connection by `WAIT <replicas> <timeout>`, which counts the replicas that have
 * everything that connection wrote.
 *
 * Invariants:
 * - a command and its WAIT are queued in one turn of the event loop on one node client
 *   whose offline queue is off: they go out on one socket, in that order, or both fail
 *   (a WAIT on a new connection would count nothing of what the old one wrote); a later
 *   WAIT is sent only on the same socket (`socketEpoch`);
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
 * How many replicas must hold a change before the store answers it: `"all"`, every
 * replica online when it is made (none where the primary has none), or a number (at
 * least that many; `0`, none: Redis's own asynchronous replication).
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
  /** Grows each time the client connects anew. */
  readonly socketEpoch: number;
}

/** Where a command goes: the primary that owns a key, and how a redirection is followed. */
export interface Router {
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

/** Runs a store's changes so that its replicas confirm them, as {@link ReplicaSetting} asks. */
export class ReplicatedChanges {
  /** The replicas each node had online at its last change. */
  private readonly online = new WeakMap<NodeConnection, number>();
  /** Whether a refused `INFO` was reported. */
  private infoRefused = false;

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
   * replicas the setting asks for have it.
   * @param deadline when no further attempt starts (ms since the epoch); a WAIT ends before it.
   * @returns the command's reply.
   * @throws StoreNotReplicatedError when the replicas did not confirm it in time (it was
   *   made), or too few are online to make it (nothing was written); else what the
   *   command failed with (an ErrorReply, a connection error), for the caller to explain.
   */
  async apply(router: Router, command: WireCommand, deadline: number): Promise<unknown> {
    let target: NodeConnection | undefined;
    let asking = false;
    for (let attempt = 0; ; attempt++) {
      let node: NodeConnection;
      try {
        node = target ?? (await router.primaryFor(command.route));
      } catch (error) {
        // No primary known for the slot yet (a cluster being found, a failover): as a command that did not run.
        if (!(await this.again(attempt, deadline))) throw error;
        continue;
      }
      if (typeof this.setting === "number" && this.setting > 0) await this.checkEnoughOnline(node, this.setting);
      const waitFor = this.setting === "all" ? (this.online.get(node) ?? 0) : this.setting;
      const sent = this.send(node, command.args, waitFor, asking, deadline);
      const [info, reply, waited] = await Promise.allSettled(sent.replies);
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
      const need = this.setting === "all" ? this.countOnline(info) : this.setting;
      this.online.set(node, need);
      if (need === 0 || !(command.confirm?.(reply.value) ?? true)) return reply.value;
      const confirmed = await this.confirmed(node, sent.epoch, need, waitFor, waited, deadline);
      if (confirmed >= need || command.unconfirmed === "return") return reply.value;
      const what = command.describe?.(reply.value) ?? "the change";
      throw new StoreNotReplicatedError(this.shown, { what, confirmed, needed: need, waitMs: REPLICA_WAIT_MS, read: command.read ?? false });
    }
  }

  /**
   * Queues, in this turn of the event loop: `INFO replication` (for "all"), `ASKING`
   * (after an ASK), the command, and `WAIT` for `waitFor` replicas (none for 0).
   */
  private send(node: NodeConnection, args: string[], waitFor: number, asking: boolean, deadline: number) {
    const epoch = node.socketEpoch;
    const info = this.setting === "all" ? node.sendCommand(["INFO", "replication"]) : Promise.resolve("");
    const ask = asking ? node.sendCommand(["ASKING"]) : undefined;
    const reply = node.sendCommand(args);
    const waited = waitFor > 0 ? node.sendCommand(["WAIT", String(waitFor), String(waitMs(deadline))]) : Promise.resolve(0);
    ask?.catch(() => undefined);
    return { replies: [info, reply, waited] as const, epoch };
  }

  /**
   * How many replicas have the change: the WAIT sent with it, then (when it asked for
   * fewer than are online now) another on the same socket, then, when still too few, the
   * replicas online counted again (one that went away while it was waited for no longer
   * counts).
   */
  private async confirmed(
    node: NodeConnection,
    epoch: number,
    need: number,
    waitedFor: number,
    waited: PromiseSettledResult<unknown>,
    deadline: number,
  ): Promise<number> {
    let confirmed = waited.status === "fulfilled" ? Number(waited.value) : 0;
    if (confirmed >= need) return confirmed;
    try {
      if (waitedFor < need && node.socketEpoch === epoch)
        confirmed = Number(await node.sendCommand(["WAIT", String(need), String(waitMs(deadline))]));
      if (confirmed >= need || this.setting !== "all") return confirmed;
      const now = onlineReplicas(String(await node.sendCommand(["INFO", "replication"])));
      this.online.set(node, now);
      return confirmed >= now ? need : confirmed;
    } catch {
      return confirmed;
    }
  }

  /**
   * With a number of replicas set: too few online at the last change on `node` (or none
   * known) are counted again, and the change is refused, before anything is written,
   * while there are still too few.
   * @throws StoreNotReplicatedError.
   */
  private async checkEnoughOnline(node: NodeConnection, needed: number): Promise<void> {
    if ((this.online.get(node) ?? 0) >= needed) return;
    const online = onlineReplicas(String(await node.sendCommand(["INFO", "replication"])));
    this.online.set(node, online);
    if (online < needed) throw new StoreNotReplicatedError(this.shown, { online, needed });
  }

  /** The replicas online in the reply to `INFO replication`; none when it was refused (reported once: nothing can be waited for). */
  private countOnline(info: PromiseSettledResult<unknown>): number {
    if (info.status === "fulfilled") return onlineReplicas(String(info.value));
    if (info.reason instanceof ErrorReply && !this.infoRefused) {
      this.infoRefused = true;
      this.warn(
        `the Redis store at ${this.shown} refused INFO (${info.reason.message}), so backchannel cannot count its replicas and answers changes without waiting for them; ` +
          `grant the user +info, or set ${REPLICAS_ENV_VAR} to the number of replicas to wait for`,
      );
    }
    return 0;
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
