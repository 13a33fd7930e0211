/**
 * Latency of a stream of messages sent at random moments, matched to their arrivals by
 * seq. Messages are sent 5 to 205 ms apart whatever the design, so each sample lands
 * at a uniformly random phase of any timer on the receiving side; a design that
 * delivers in a few ms sees every message alone, a polling one sees several per poll.
 */
import { pauseWithinPeriod, withTimeout } from "./timing.js";
import { assertExactlyOnce } from "./integrity.js";

/** The spread of the pause between two sends. */
export const SEND_SPREAD_MS = 200;

/** Something that reports arrivals: the seq of each message and when it was seen. */
export interface Arrivals {
  next(timeoutMs: number): Promise<{ seq: number; at: number }>;
}

/** Latencies of a stream, in ms, one per message, in the order of arrival. */
export interface StreamLatencies {
  /** From the send call returning to the arrival (the headline: the sender knows it is sent). */
  fromReturn: number[];
  /** From the send call starting to the arrival (includes the send's own round trip and write). */
  fromCall: number[];
}

/**
 * Sends `count + 1` messages with `send` (which resolves with the seq once the send has
 * returned) and measures each one's arrival; the first message warms the path up and
 * is not counted.
 * @throws DeliveryError when a message does not arrive exactly once; Error on a timeout.
 */
export async function streamLatencies(
  where: string,
  count: number,
  send: (index: number) => Promise<number>,
  arrivals: Arrivals,
  arrivalTimeoutMs: number,
): Promise<StreamLatencies> {
  const calledAt = new Map<number, number>();
  const sentAt = new Map<number, number>();
  const arrived: { seq: number; at: number }[] = [];
  const receiving = (async () => {
    for (let i = 0; i <= count; i += 1) arrived.push(await arrivals.next(arrivalTimeoutMs + SEND_SPREAD_MS));
  })();
  // Fail fast on an early receive error rather than after every send.
  let failure: unknown;
  receiving.catch((error: unknown) => (failure = error));
  for (let i = 0; i <= count && failure === undefined; i += 1) {
    await pauseWithinPeriod(SEND_SPREAD_MS);
    const called = performance.now();
    const seq = await send(i);
    sentAt.set(seq, performance.now());
    calledAt.set(seq, called);
  }
  await withTimeout(receiving, arrivalTimeoutMs + 1000, `${where}: the last arrivals`);
  assertExactlyOnce(
    where,
    [...sentAt.keys()].map(String),
    arrived.map((arrival) => String(arrival.seq)),
  );
  const firstSeq = Math.min(...sentAt.keys());
  const counted = arrived.filter((arrival) => arrival.seq !== firstSeq);
  return {
    fromReturn: counted.map((arrival) => arrival.at - sentAt.get(arrival.seq)!),
    fromCall: counted.map((arrival) => arrival.at - calledAt.get(arrival.seq)!),
  };
}
