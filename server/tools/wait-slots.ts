/**
 * The caps on calls at once (docs/ARCHITECTURE.md, "Limits per principal"), each a count
 * of slots of a caller inside the process's:
 *
 * - waiting calls (`poll_agent_messages` and `poll_ui_messages` with `wait_ms`,
 *   `watch_agent_messages` with `wait_ms`): a call that may wait takes a slot for as long
 *   as it runs. A waiting call costs the server a connection, a server instance and its
 *   timers (about 120 KiB over HTTP): without a cap one principal's thousands of waits
 *   made every other caller's calls take seconds;
 * - active calls, over HTTP: every other call takes a slot from its arrival until its
 *   answer is sent (server/transports/admission.ts). An answer is held in memory until
 *   the client reads it, and a poll's can be three times its messages' bytes (its text
 *   repeats them, escaped): without a cap one principal's unread polls of a full queue
 *   grew the server by gigabytes.
 *
 * A call past a cap is refused at once ({@link WaitLimitError}, {@link CallLimitError}),
 * having read and acknowledged nothing. It is refused rather than answered at once with
 * what waits: an empty answer would look like "no message yet", and a client that loops
 * on its waits would ask again at once, turning each wait into a busy loop.
 */
import { CallerError } from "../../core/errors.js";

/** The tools whose calls with `wait_ms` above 0 wait, and so take a slot. */
export const WAITING_TOOLS: ReadonlySet<string> = new Set(["poll_agent_messages", "poll_ui_messages", "watch_agent_messages"]);

/** Whether a call of tool `name` with `waitMs` may wait, and so takes a slot. */
export function callMayWait(name: string, waitMs: unknown): boolean {
  return WAITING_TOOLS.has(name) && typeof waitMs === "number" && waitMs > 0;
}

/** Whose slots ran out: one principal's, or the whole server process's. */
export type WaitScope = "account" | "server";

/** Too many calls wait: the caller's or the process's cap on waiting calls is reached. */
export class WaitLimitError extends CallerError {
  override readonly name = "WaitLimitError";
  override readonly code = "WAIT_LIMIT";
  constructor(
    readonly scope: WaitScope,
    readonly max: number,
  ) {
    const who =
      scope === "account"
        ? `your account has ${max} waiting calls on this server (its limit per account)`
        : `this server has ${max} waiting calls (its limit)`;
    super(
      `too many waiting calls: ${who}; nothing was read or acknowledged. ` +
        "End a call that waits, or poll without wait_ms, or try again in a few seconds when a wait has ended",
    );
  }
}

/** Too many calls are answered at once: the caller's or the process's cap on active calls would be passed. */
export class CallLimitError extends CallerError {
  override readonly name = "CallLimitError";
  override readonly code = "CALL_LIMIT";
  constructor(
    readonly scope: WaitScope,
    readonly max: number,
    /** How many calls the refused request holds (a JSON-RPC batch holds several). */
    readonly calls: number,
  ) {
    const who =
      scope === "account" ? `your account may have at most ${max} answered at once on this server` : `this server answers at most ${max} at once`;
    const held = calls > 1 ? `this request holds ${calls} calls, and ${who}` : who;
    const remedy =
      calls > max
        ? "Send fewer calls per request (one is best)"
        : "Read the answers of your calls (a call counts until its answer is sent), or try again in a moment";
    super(`too many calls at once: ${held}; nothing was done. ${remedy}`);
  }
}

/** A count of calls with a cap, inside an optional outer one (a principal's inside the process's). */
abstract class Slots<Outer extends Slots<Outer>> {
  private taken = 0;

  /**
   * @param max the most slots that may be taken here at once.
   * @param scope whose slots these are, for the error.
   * @param outer slots every slot taken here also takes (the process's).
   */
  constructor(
    protected readonly max: number,
    protected readonly scope: WaitScope,
    private readonly outer?: Outer,
  ) {}

  /** The error this cap gives for a request of `count` calls. */
  protected abstract limitError(count: number): CallerError;

  /** How many slots are taken here now. */
  get size(): number {
    return this.taken;
  }

  /** The error {@link take} would throw now for `count` slots, or `undefined` when they are free here and in the outer slots. */
  refusal(count = 1): CallerError | undefined {
    if (this.taken + count > this.max) return this.limitError(count);
    return this.outer?.refusal(count);
  }

  /**
   * Takes `count` slots here and in the outer slots, all or none.
   * @returns the function that gives them back (calling it again does nothing).
   * @throws the cap's error (WaitLimitError, CallLimitError) when this cap or an outer one would be passed (nothing taken).
   */
  take(count = 1): () => void {
    if (this.taken + count > this.max) throw this.limitError(count);
    const giveBackOuter = this.outer?.take(count);
    this.taken += count;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.taken -= count;
      giveBackOuter?.();
    };
  }
}

/** Slots of calls that may wait ({@link callMayWait}). */
export class WaitSlots extends Slots<WaitSlots> {
  protected limitError(): WaitLimitError {
    return new WaitLimitError(this.scope, this.max);
  }
}

/** Slots of the calls answered at once over HTTP, waiting calls aside, each held until its answer is sent. */
export class ActiveSlots extends Slots<ActiveSlots> {
  protected limitError(count: number): CallLimitError {
    return new CallLimitError(this.scope, this.max, count);
  }
}
