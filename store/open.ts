/**
 * Which store a process uses, and opening it. The file store in the data directory is
 * the default; a store's modules are loaded only when it is chosen, so that the watcher
 * and the status line load no more than they need.
 */
import { resolveDataDir } from "../core/paths.js";
import type { ChannelReader } from "./store.js";

/** Where the channels are: a data directory of the file store. */
export type StoreLocation = { kind: "file"; dataDir: string };

/** The store this process is configured for: the data directory (`$BACKCHANNEL_HOME`, else the per-user default). */
export function storeLocationFromEnv(env: NodeJS.ProcessEnv = process.env): StoreLocation {
  return { kind: "file", dataDir: resolveDataDir(env) };
}

/** A read-only view of the store at `location` (no lock, no write, no repair). */
export async function openReader(location: StoreLocation): Promise<ChannelReader> {
  const { FileQueueReader } = await import("./file/queue-reader.js");
  return new FileQueueReader(location.dataDir);
}

/** How a person would name the store at `location` in a message: its data directory. */
export function describeLocation(location: StoreLocation): string {
  return `the data directory ${location.dataDir}`;
}

/**
 * Why a read-only user (the watcher) cannot use the store at `location`, or `undefined`
 * when it can: for the file store, a data directory that no server has made yet (most
 * often a different `BACKCHANNEL_HOME`) or cannot read.
 */
export async function unusableLocation(location: StoreLocation): Promise<string | undefined> {
  const { readdir } = await import("node:fs/promises");
  try {
    await readdir(location.dataDir);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? `no data directory at ${location.dataDir}: no backchannel server has used it yet. Is BACKCHANNEL_HOME the same as the server's?`
      : `cannot read the data directory ${location.dataDir} (${code ?? (error as Error).message})`;
  }
}
