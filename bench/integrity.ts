/**
 * The one check the benchmark never skips: every message sent is received exactly once.
 * A lost or duplicated message ends the run with an error, whatever the figures say.
 */

/** Thrown when messages were lost or duplicated. */
export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
}

/** Counts of what went wrong between what was sent and what was received. */
export interface Tally {
  lost: number;
  duplicated: number;
}

/** Compares the keys that were sent with those received (in any order). */
export function tally(sent: Iterable<string>, received: Iterable<string>): Tally {
  const counts = new Map<string, number>();
  for (const key of received) counts.set(key, (counts.get(key) ?? 0) + 1);
  let lost = 0;
  let duplicated = 0;
  for (const key of sent) {
    const count = counts.get(key) ?? 0;
    if (count === 0) lost += 1;
    if (count > 1) duplicated += count - 1;
    counts.delete(key);
  }
  // Anything left was received but never sent: count it as duplicated, it is as wrong.
  for (const count of counts.values()) duplicated += count;
  return { lost, duplicated };
}

/**
 * @throws DeliveryError naming `where` when anything was lost or duplicated.
 */
export function assertExactlyOnce(where: string, sent: Iterable<string>, received: Iterable<string>): Tally {
  const result = tally(sent, received);
  if (result.lost > 0 || result.duplicated > 0) {
    throw new DeliveryError(`${where}: ${result.lost} message(s) lost, ${result.duplicated} duplicated`);
  }
  return result;
}
