/**
 * The two designs every figure is measured for: backchannel itself and the plain
 * polling baseline (bench/baseline/). Each is described by the processes it runs and
 * by how its app reads the agent's messages, so that one harness drives both.
 */
import { fileURLToPath } from "node:url";

/** The name of a design, as it appears in the results. */
export type DesignName = "backchannel" | "baseline";

/** How a design is run. */
export interface Design {
  name: DesignName;
  /** The node arguments of the stdio MCP server (data directory from `$BACKCHANNEL_HOME`). */
  serverArgs: string[];
  /** The node arguments of the watcher of `channelId`. */
  watcherArgs(channelId: string, follow: boolean): string[];
  /**
   * The app's reading loop: a call to `poll_ui_messages` with `wait_ms: appWaitMs`,
   * started every `appIntervalMs` (0: again as soon as the previous one returns).
   */
  appWaitMs: number;
  /** See {@link Design.appWaitMs}. */
  appIntervalMs: number;
  /**
   * The period of the timer that decides this design's latency, if any. Samples are
   * taken at a random moment within it, so that the phase of the timer is uniform.
   */
  timerPeriodMs: { watcher: number; app: number };
}

const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const BASELINE_SERVER = fileURLToPath(new URL("./baseline/server.js", import.meta.url));
const BASELINE_WATCHER = fileURLToPath(new URL("./baseline/watcher.js", import.meta.url));

/** backchannel: event-driven long-polls and watcher, durable atomic writes. */
export const BACKCHANNEL: Design = {
  name: "backchannel",
  serverArgs: [CLI, "serve"],
  watcherArgs: (channelId, follow) => [CLI, "watch", channelId, ...(follow ? ["--follow"] : [])],
  appWaitMs: 30_000,
  appIntervalMs: 0,
  // No timer decides its latency; a short random pause still spreads the samples.
  timerPeriodMs: { watcher: 50, app: 50 },
};

/** The baseline: the watcher reads every 500 ms, the app polls every 1,200 ms. */
export const BASELINE: Design = {
  name: "baseline",
  serverArgs: [BASELINE_SERVER],
  watcherArgs: (channelId, follow) => [BASELINE_WATCHER, channelId, ...(follow ? ["--follow"] : [])],
  appWaitMs: 0,
  appIntervalMs: 1200,
  timerPeriodMs: { watcher: 500, app: 1200 },
};

/** Both designs, in the order they are reported. */
export const DESIGNS: readonly Design[] = [BACKCHANNEL, BASELINE];
