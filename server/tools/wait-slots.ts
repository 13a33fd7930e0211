/**
 * The cap on waiting calls (docs/ARCHITECTURE.md, "Limits per principal"): each call that
 * may wait (`poll_agent_messages` and `poll_ui_messages` with `wait_ms`,
 * `watch_agent_messages` with `wait_ms`) takes a slot for as long as it runs, from its
 * caller's slots and the process's. A waiting call costs the server a connection, a
 * server instance and its timers (about 120 KiB over HTTP): without a cap one principal's
 * thousands of waits made every other caller's calls take seconds.
 *
 * A call past the cap is refused at once with {@link WaitLimitError}, having read and
 * acknowledged nothing. It is refused rather than answered at once with what waits:
 * an empty answer would look like "no message yet", and a client that loops on its
 * waits would ask again at once, turning each wait into a busy loop.
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

/** A count of waiting calls with a cap, inside an optional outer one (a principal's inside the process's). */
export class WaitSlots {
  private waiting = 0;

  /**
   * @param max the most calls that may wait here at once.
   * @param scope whose slots these are, for the error.
   * @param outer slots every slot taken here also takes (the process's).
   */
  constructor(
    private readonly max: number,
    private readonly scope: WaitScope,
    private readonly outer?: WaitSlots,
  ) {}

  /** How many calls wait here now. */
  get size(): number {
    return this.waiting;
  }

  /** The error {@link take} would throw now, or `undefined` when a slot is free here and in the outer slots. */
  refusal(): WaitLimitError | undefined {
    if (this.waiting >= this.max) return new WaitLimitError(this.scope, this.max);
    return this.outer?.refusal();
  }

  /**
   * Takes a slot here and in the outer slots.
   * @returns the function that gives it back (calling it again does nothing).
   * @throws WaitLimitError when this cap or an outer one is reached (nothing taken).
   */
  take(): () => void {
    if (this.waiting >= this.max) throw new WaitLimitError(this.scope, this.max);
    const giveBackOuter = this.outer?.take();
    this.waiting += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.waiting -= 1;
      giveBackOuter?.();
    };
  }
}
