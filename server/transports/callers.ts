/**
 * What an HTTP listener keeps for its callers across their requests (docs/ARCHITECTURE.md,
 * "Limits per principal"): for each principal its view of the store behind its limits,
 * the table of its waiting polls and its slots; without authentication one caller,
 * everyone, over the whole store and the process's slots.
 *
 * Invariant: the callers kept in memory are bounded. A principal that has no call in
 * progress is forgotten, least recently used first, once more than {@link KEPT_CALLERS}
 * are kept (each costs a few KiB; with OAuth every `sub` is a principal, and a principal
 * per request grew a server by 7 KiB each, never given back). A principal with a call in
 * progress is kept (the process's slots bound how many have one). What a forgotten
 * principal loses is counted again from the store, but for its appends of the last
 * minute, which the appends limit counts per process anyway.
 */
import { PrincipalRoster, PrincipalUsage, withPrincipalLimits } from "../../store/principal-limits.js";
import type { ChannelStore } from "../../store/store.js";
import { WaitingPolls } from "../tools/waiting-polls.js";
import { ActiveSlots, WaitSlots } from "../tools/wait-slots.js";
import type { CallerSlots } from "./admission.js";

/** How many principals a listener keeps in memory, those with a call in progress aside. */
export const KEPT_CALLERS = 1000;

/** What a listener keeps for one caller (a principal, or everyone without authentication). */
export interface Caller {
  /** The caller's view of the store: a principal's own, behind its limits; else the whole store. */
  store: ChannelStore;
  /** Its waiting polls: a cancel names a request id, which each client picks, so one principal cannot end another's waits. */
  waitingPolls: WaitingPolls;
  /** The slots its calls take until answered: a principal's own inside the process's; without authentication, the process's. */
  slots: CallerSlots;
}

/** The callers of one listener, over `store`. */
export class Callers {
  /** The principals kept, least recently used first. */
  private readonly kept = new Map<string, Caller>();
  /** The slots of every caller together: everyone's without authentication. */
  private readonly processSlots: CallerSlots;
  /** Everyone, without authentication. */
  private readonly everyone: Caller;
  /** The principals the store holds, against its limit (shared by every principal's view). */
  private readonly roster: PrincipalRoster;

  /** @param store the whole store. */
  constructor(private readonly store: ChannelStore) {
    const { limits } = store;
    this.processSlots = {
      waiting: new WaitSlots(limits.maxWaitingCalls, "server"),
      active: new ActiveSlots(limits.maxActiveCalls, "server"),
    };
    this.everyone = { store, waitingPolls: new WaitingPolls(), slots: this.processSlots };
    this.roster = new PrincipalRoster(store);
  }

  /** The caller of `namespace` (a principal's), or everyone for `undefined`; made when not kept. */
  of(namespace: string | undefined): Caller {
    if (namespace === undefined) return this.everyone;
    const caller = this.kept.get(namespace) ?? this.newCaller(namespace);
    // Map order is the order of use: the least recently used comes first.
    this.kept.delete(namespace);
    this.kept.set(namespace, caller);
    if (this.kept.size > KEPT_CALLERS) this.forgetIdle(namespace);
    return caller;
  }

  private newCaller(namespace: string): Caller {
    const { limits } = this.store;
    const usage = new PrincipalUsage(limits, () => this.roster.admit(namespace));
    return {
      store: withPrincipalLimits(this.store.forPrincipal(namespace), usage),
      waitingPolls: new WaitingPolls(),
      slots: {
        waiting: new WaitSlots(limits.maxPrincipalWaitingCalls, "account", this.processSlots.waiting),
        active: new ActiveSlots(limits.maxPrincipalActiveCalls, "account", this.processSlots.active),
      },
    };
  }

  /**
   * Forgets principals with no call in progress, least recently used first, until
   * {@link KEPT_CALLERS} are kept or none is idle; never `asked`, the one being served
   * (its slots are not taken yet: forgotten, its next request would count apart).
   */
  private forgetIdle(asked: string): void {
    for (const [namespace, caller] of this.kept) {
      if (this.kept.size <= KEPT_CALLERS) return;
      if (namespace !== asked && caller.slots.waiting.size === 0 && caller.slots.active.size === 0) this.kept.delete(namespace);
    }
  }
}
