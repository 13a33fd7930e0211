/**
 * Errors the store throws. Each message says what was wrong and what to do, because it
 * reaches the model or the app as the text of a tool error.
 */
import type { QueueName } from "../core/paths.js";
import { CallerError } from "../core/errors.js";

/** Names the queue in words a caller understands. */
export function describeQueue(channelId: string, queue: QueueName): string {
  return queue === "ui" ? `the app's queue of channel ${channelId}` : `the agent's queue of channel ${channelId}`;
}

/** One message's `data` is larger than `maxMessageBytes`. */
export class MessageTooLargeError extends CallerError {
  override readonly name = "MessageTooLargeError";
  override readonly code = "MESSAGE_TOO_LARGE";
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`message too large: its data is ${bytes} bytes of JSON, the limit is ${limit}; ` + `send less (split it, or send a summary) and try again`);
  }
}

/** A queue is at one of its limits; nothing was added and nothing queued was dropped. */
export class QueueFullError extends CallerError {
  override readonly name = "QueueFullError";
  override readonly code = "QUEUE_FULL";
  constructor(
    readonly channelId: string,
    readonly queue: QueueName,
    readonly limit: "messages" | "bytes",
    readonly max: number,
  ) {
    const reader = queue === "ui" ? "the app" : "the agent";
    const what = limit === "messages" ? `${max} messages` : `${max} bytes`;
    super(
      `${describeQueue(channelId, queue)} is full (${what}): ${reader} is not reading it. ` +
        `Nothing was added and nothing queued was lost; wait until ${reader} polls, then send again.`,
    );
  }
}

/** Which limit of a principal a call would pass (core/limits.ts). */
export type PrincipalLimit = "channels" | "appends" | "bytes";

/** A remote principal is at one of its limits; nothing was changed. The message says which, and when to try again. */
export class PrincipalLimitError extends CallerError {
  override readonly name = "PrincipalLimitError";
  override readonly code = "PRINCIPAL_LIMIT";
  constructor(
    readonly limit: PrincipalLimit,
    readonly max: number,
    /** When a retry can succeed, in ms from now; `undefined` when only freeing something (reading, removal of idle channels) helps. */
    readonly retryAfterMs: number | undefined,
    /** What frees room, in words. */
    remedy: string,
  ) {
    const what = { channels: `${max} channels`, appends: `${max} messages per minute`, bytes: `${max} bytes of queued messages and state` }[limit];
    const when = retryAfterMs === undefined ? "" : ` Try again in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s.`;
    super(`limit reached: your account may have at most ${what} (the ${limit} limit). Nothing was changed. ${remedy}${when}`);
  }
}

/** The store holds data of `max` remote principals, its limit, and a principal new to it tried to write; nothing was written. */
export class TooManyPrincipalsError extends CallerError {
  override readonly name = "TooManyPrincipalsError";
  override readonly code = "TOO_MANY_PRINCIPALS";
  constructor(
    readonly max: number,
    /** How long a channel lives unused, for the message. */
    channelTtlMs: number,
  ) {
    const days = Math.round(channelTtlMs / 86_400_000);
    super(
      `this server keeps data for at most ${max} accounts and holds that many, so it cannot keep yours: nothing was written. ` +
        `Reading works meanwhile. Whoever runs the server can raise BACKCHANNEL_MAX_PRINCIPALS; an account whose channels have all gone unused for ${days >= 1 ? `${days} days` : `${channelTtlMs} ms`} and that keeps no saved app is removed, which frees room`,
    );
  }
}

/** A poll's cursor (`after`) is not a whole number >= 0, or the epoch it came from is not an epoch. */
export class InvalidCursorError extends CallerError {
  override readonly name = "InvalidCursorError";
  override readonly code = "INVALID_CURSOR";
  constructor(
    readonly after: unknown,
    readonly epoch?: unknown,
  ) {
    super(
      epoch === undefined
        ? `after must be a whole number >= 0 (the cursor of your last poll), not ${String(after)}`
        : `epoch must be the epoch of your last poll (up to 32 letters, digits, "_" and "-"), not ${JSON.stringify(String(epoch).slice(0, 40))}`,
    );
  }
}

/** A poll's reader id is not one (READER_ID_PATTERN, core/ids.ts); the same code as a bad cursor: a poll's position is refused. */
export class InvalidReaderError extends CallerError {
  override readonly name = "InvalidReaderError";
  override readonly code = "INVALID_CURSOR";
  constructor(readonly reader: unknown) {
    super(
      `reader must be 8 to 32 letters, digits, "_" and "-" (one token your app chooses per page load), not ${JSON.stringify(String(reader).slice(0, 40))}`,
    );
  }
}

/** A state document is larger than `maxStateBytes`; the stored one is unchanged. */
export class StateTooLargeError extends CallerError {
  override readonly name = "StateTooLargeError";
  override readonly code = "STATE_TOO_LARGE";
  constructor(
    readonly stateName: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`${stateName} would be ${bytes} bytes of JSON, the limit is ${limit}; make it smaller`);
  }
}

/** A queue file is not a queue (file store: see store/file/log-format.ts); `reason` says what is wrong. */
export class CorruptQueueFileError extends CallerError {
  override readonly name = "CorruptQueueFileError";
  override readonly code = "CORRUPT_QUEUE_FILE";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path} is not a valid queue file: ${reason}`);
  }
}
