/**
 * Order statistics of a set of samples.
 */

/** The summary of one set of samples, in the samples' unit. */
export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
}

/**
 * Summarises `samples` with nearest-rank percentiles: p is the smallest sample with at
 * least p % of the samples at or below it. So p99 of fewer than 100 samples is the
 * largest one; read p99 of a quick run as "the worst seen".
 * @throws on an empty set, which would make every figure a lie.
 */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error("no samples to summarise");
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { n: sorted.length, p50: rank(50), p90: rank(90), p99: rank(99), min: sorted[0]!, max: sorted.at(-1)! };
}
