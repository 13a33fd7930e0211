/**
 * What a suite produces: figures, each with its raw samples for every design it measured.
 */
import type { DesignName } from "./designs.js";

/** One measured quantity for the designs a suite measures. */
export interface Figure {
  /** A stable key, e.g. "wake.exit"; targets and the JSON refer to it. */
  key: string;
  /** What is measured, in a few words, for the table. */
  name: string;
  /** The unit of the samples: "ms", "appends/s", "calls/min", … */
  unit: string;
  /** Whether a lower or a higher value is better (the ratio is oriented so that > 1 favours backchannel). */
  better: "lower" | "higher";
  /** The raw samples of each design measured (backchannel and the baseline always; the Redis store in the suites that compare stores). */
  samples: Partial<Record<DesignName, number[]>> & Record<"backchannel" | "baseline", number[]>;
  /** What explains the figure (a breakdown, a diagnosis), for the JSON only. */
  details?: Record<string, number | string>;
}

/** The settings of a run that suites read. */
export interface RunContext {
  /** "quick" (the default, about 2½ minutes) or "full". */
  mode: "quick" | "full";
  /** A temporary folder for this run's data directories, removed at the end. */
  root: string;
  /** Progress notes for the console. */
  log(line: string): void;
}
