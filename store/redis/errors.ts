/**
 * Errors of the Redis store that reach the caller. Each names the store (its URL without
 * the password) and says what to check; none says more about the server than the URL
 * the user configured.
 */
import { CallerError } from "../../core/errors.js";

/**
 * Redis cannot be reached (down, restarting, wrong address, network). Nothing was done,
 * unless `sent`: the call had reached Redis, which stopped answering (a stopped server,
 * a partition), and may still carry it out.
 */
export class StoreUnavailableError extends CallerError {
  override readonly name = "StoreUnavailableError";
  override readonly code = "STORE_UNAVAILABLE";
  constructor(
    readonly shown: string,
    readonly reason: string,
    readonly sent = false,
  ) {
    super(
      `the Redis store at ${shown} is unreachable (${reason}): ` +
        (sent ? "the call was sent and may still be carried out, so check before repeating a write. " : "nothing was read or written. ") +
        "Check that Redis is running and that BACKCHANNEL_STORE points at it; backchannel reconnects by itself, so try again in a moment",
    );
  }
}

/** Redis answered with an error (out of memory, persistence failing, a permission, a key of the wrong type). */
export class StoreRefusedError extends CallerError {
  override readonly name = "StoreRefusedError";
  override readonly code = "STORE_REFUSED";
  constructor(
    readonly shown: string,
    readonly reply: string,
  ) {
    super(`the Redis store at ${shown} refused the call: ${reply}. Check the Redis server (its log, maxmemory, persistence, ACL), then try again`);
  }
}

/**
 * Redis is at its maxmemory (with `noeviction`) and refused a write: nothing of that
 * command was written. Reads and acknowledgements still run (./scripts.ts flags them
 * `allow-oom`), so what is queued can still be read.
 */
export class StoreFullError extends CallerError {
  override readonly name = "StoreFullError";
  override readonly code = "STORE_FULL";
  constructor(readonly shown: string) {
    super(
      `the Redis store at ${shown} is full (maxmemory): nothing was written. ` +
        "Polls, reads and acknowledgements still work, so what is queued can still be read, but nothing new fits. " +
        "Whoever runs this Redis must free memory or raise its maxmemory (CONFIG SET maxmemory, or maxmemory in redis.conf); then try again",
    );
  }
}

/** What {@link StoreNotReplicatedError} reports: a change its replicas did not confirm, or a change refused for want of replicas. */
export type NotReplicated = { what: string; confirmed: number; needed: number; waitMs: number; read: boolean } | { online: number; needed: number };

/**
 * The replicas did not confirm a change in time (store/redis/replicated.ts): it was
 * made on the primary, which keeps it, but a failover before a replica has it would lose
 * it. Or fewer replicas are online than the setting asks for, and nothing was written.
 */
export class StoreNotReplicatedError extends CallerError {
  override readonly name = "StoreNotReplicatedError";
  override readonly code = "STORE_NOT_REPLICATED";
  constructor(
    readonly shown: string,
    readonly detail: NotReplicated,
  ) {
    super(`the Redis store at ${shown}: ${notReplicatedText(detail)}`);
  }
}

function notReplicatedText(detail: NotReplicated): string {
  const fix = "Check the primary's replicas (INFO replication), or set BACKCHANNEL_REDIS_REPLICAS to ask for fewer (0: answer without them)";
  if ("online" in detail)
    return (
      `only ${detail.online} of the ${detail.needed} replicas that must have each change are in sync with the primary, so nothing was written ` +
      "(a failover could lose it). A replica catches up by itself: try again in a moment. One gone for good stops counting once Redis could no longer promote it " +
      "(on a Redis Cluster, not heard from for cluster-node-timeout × (cluster-replica-validity-factor + 2) + repl-ping-replica-period). " +
      fix
    );
  const count = `${detail.confirmed} of ${detail.needed} replicas confirmed it within ${detail.waitMs} ms`;
  if (detail.read)
    return `${detail.what} is not yet on the replicas (${count}), so nothing was returned: a failover could still take it back. Poll again with the same cursor. ${fix}`;
  return (
    `${detail.what} was made, but only ${count}: the primary keeps it, and it is lost only if that primary fails before a replica has it. ` +
    `Sending it again may deliver it twice. ${fix}`
  );
}
