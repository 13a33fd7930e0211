/**
 * A queue's epoch: the name of one life of its seq counter (docs/ARCHITECTURE.md,
 * "Channels"). Within one epoch a seq is never handed out twice, so a cursor means the
 * same thing at every poll. A store starts a new epoch whenever it starts a queue's
 * counter again without knowing every seq handed out before (Redis restarted empty, a
 * channel folder removed and made again, a queue file moved aside as corrupt), so a
 * reader that keeps a seq across calls keeps the epoch beside it: a poll or peek that
 * shows another epoch means that seq is void, and the queue is read from its new start.
 *
 * Every poll result carries it; a poll passes the epoch its cursor came from, and a
 * cursor of another epoch acknowledges nothing.
 */

/** The epoch of a queue that has none recorded: one never written, or one written before epochs were kept. */
export const NO_EPOCH = "";

/** What an epoch looks like: {@link NO_EPOCH}, or up to 32 letters, digits, `_` and `-` (minted ones are 16). */
export const EPOCH_PATTERN = /^[A-Za-z0-9_-]{0,32}$/;

/** Whether `value` is an epoch (a string matching {@link EPOCH_PATTERN}). */
export function isEpoch(value: unknown): value is string {
  return typeof value === "string" && EPOCH_PATTERN.test(value);
}

/** A seq a reader keeps across reads, with the epoch it belongs to (`undefined`: none known, taken as the queue's). */
export interface SeqMark {
  seq: number;
  epoch: string | undefined;
}

/**
 * What of `mark` still holds in a queue whose epoch is now `epoch`: its seq in the same
 * epoch (or when the mark has none), 0 in another: the queue started again, and every
 * message in it is new to the reader.
 */
export function afterSeqIn(epoch: string, mark: SeqMark): number {
  return mark.epoch === undefined || mark.epoch === epoch ? mark.seq : 0;
}
