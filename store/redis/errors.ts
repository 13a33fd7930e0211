/**
 * Errors of the Redis store that reach the caller. Each names the store (its URL without
 * the password) and says what to check; none says more about the server than the URL
 * the user configured.
 */
import { CallerError } from "../../core/errors.js";

/** Redis cannot be reached (down, restarting, wrong address, network); nothing was done. */
export class StoreUnavailableError extends CallerError {
  override readonly name = "StoreUnavailableError";
  override readonly code = "STORE_UNAVAILABLE";
  constructor(
    readonly shown: string,
    readonly reason: string,
  ) {
    super(
      `the Redis store at ${shown} is unreachable (${reason}): nothing was read or written. ` +
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
