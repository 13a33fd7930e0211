/**
 * The plugin's wake hook seen from outside, for the Claude Code suite's breakdown of a
 * plugin wake: every change of the session claims in `<data dir>/watchers/`
 * (watcher/session-claim.ts), timed as it lands. A hook that finds mail first writes its
 * claim with the seq it wakes the agent for ("announced"), then gives the claim up (pid
 * 0) and exits 2; so "ask → announced" is backchannel's part of the wake, and "released
 * → the model's request" is the hook's exit plus Claude Code's own.
 */
import { type FSWatcher, watch } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** One state of a claim file, with `performance.now()` when it was read. */
interface ClaimState {
  at: number;
  pid: number;
  announced: Record<string, number>;
}

/** A running log of the claims in a data directory. */
export interface ClaimLog {
  /** When a claim first announced `seq` (or a later one) on `channelId`; NaN when none did. */
  announcedAt(channelId: string, seq: number): number;
  /** When, after announcing `seq` on `channelId`, that claim was given up (its pid 0); NaN when it was not. */
  releasedAt(channelId: string, seq: number): number;
  close(): void;
}

/** Starts the log: reads every claim on each change of the folder (it is made when missing). */
export async function logClaims(dataDir: string): Promise<ClaimLog> {
  const folder = join(dataDir, "watchers");
  await mkdir(folder, { recursive: true });
  const states: ClaimState[] = [];
  const last = new Map<string, string>();
  let reading = Promise.resolve();
  const read = async () => {
    const at = performance.now();
    for (const name of (await readdir(folder).catch(() => [] as string[])).filter((entry) => entry.endsWith(".json"))) {
      const text = await readFile(join(folder, name), "utf8").catch(() => "");
      if (!text || last.get(name) === text) continue;
      last.set(name, text);
      try {
        const claim = JSON.parse(text) as { pid?: number; announced?: Record<string, number> };
        states.push({ at, pid: claim.pid ?? 0, announced: claim.announced ?? {} });
      } catch {
        // A file being replaced reads whole or not at all (atomic rename); anything else is not a claim.
      }
    }
  };
  // One read at a time, in order, so that each state's time is when it was first seen.
  const watcher: FSWatcher = watch(folder, () => {
    reading = reading.then(read);
  });
  await read();
  const announcing = (channelId: string, seq: number) => states.findIndex((state) => (state.announced[channelId] ?? 0) >= seq);
  return {
    announcedAt(channelId, seq) {
      return states[announcing(channelId, seq)]?.at ?? Number.NaN;
    },
    releasedAt(channelId, seq) {
      const from = announcing(channelId, seq);
      if (from < 0) return Number.NaN;
      return states.slice(from).find((state) => state.pid === 0)?.at ?? Number.NaN;
    },
    close: () => watcher.close(),
  };
}
