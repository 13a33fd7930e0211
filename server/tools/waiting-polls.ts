/**
 * The app's polls that wait in this process, by JSON-RPC request id. Over stateless
 * HTTP a 2025-11-25 client cancels with `notifications/cancelled` in a request of its
 * own, which a fresh server instance receives: that instance has no such request, so
 * without this table the cancelled poll would wait out its `wait_ms`, holding the
 * host's connection. (A 2026-07-28 client closes the request instead, which ends the
 * wait through the request's own signal.)
 *
 * Request ids are chosen by each client, so two clients may wait with the same id: a
 * cancel then ends neither. Ending a wait is harmless to a poll it was not meant for:
 * the poll answers early with what there is, and the app polls again.
 */
import type { RequestId } from "@modelcontextprotocol/server";

/** A table of waiting polls; one per process (or per HTTP listener). */
export class WaitingPolls {
  private readonly byId = new Map<string, Set<() => void>>();

  /** Adds a poll of request `id` that waits; `end` ends its wait. @returns the function that removes it again. */
  add(id: RequestId, end: () => void): () => void {
    const key = keyOf(id);
    const ends = this.byId.get(key) ?? new Set<() => void>();
    ends.add(end);
    this.byId.set(key, ends);
    return () => {
      ends.delete(end);
      if (ends.size === 0 && this.byId.get(key) === ends) this.byId.delete(key);
    };
  }

  /** Ends the wait of the poll of request `id` when exactly one such poll waits here. @returns whether one was ended. */
  cancel(id: RequestId): boolean {
    const ends = this.byId.get(keyOf(id));
    if (ends?.size !== 1) return false;
    for (const end of ends) end();
    return true;
  }
}

/** 5 and "5" are different ids. */
function keyOf(id: RequestId): string {
  return `${typeof id}:${id}`;
}
