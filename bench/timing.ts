/**
 * Small timing helpers shared by the suites.
 */
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Sleeps for a random time within `periodMs` (plus 5 ms), so that the moment a sample
 * starts is uniform over the period of the timer being measured.
 */
export function pauseWithinPeriod(periodMs: number): Promise<void> {
  return sleep(5 + Math.random() * periodMs);
}

/**
 * `promise`, or a rejection naming `what` after `ms`.
 * @throws Error("timed out after … waiting for <what>").
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
