/**
 * Which store a process uses, and opening it. The file store in the data directory is
 * the default; `BACKCHANNEL_STORE=redis://…` (or `serve --store <url>`) chooses the Redis
 * store. A store's modules are loaded only when it is chosen (dynamic imports), so that
 * the watcher and the status line load no Redis client over the file store, and no lock
 * library over Redis.
 */
import type { Limits } from "../core/limits.js";
import { resolveDataDir } from "../core/paths.js";
import { isRedisUrl, parseRedisUrl, InvalidStoreUrlError } from "./redis/location.js";
import type { ChannelReader, ChannelStore } from "./store.js";

/** Where the channels are: a data directory of the file store, or a Redis store. */
export type StoreLocation = { kind: "file"; dataDir: string } | { kind: "redis"; url: string; shown: string };

/** The environment variable that chooses the store. */
export const STORE_ENV_VAR = "BACKCHANNEL_STORE";

/**
 * The store this process is configured for: `setting` (from `serve --store`) or else
 * `$BACKCHANNEL_STORE` when it is a Redis URL; when neither is set, the file store in
 * the data directory (`$BACKCHANNEL_HOME`, else the per-user default).
 * @throws InvalidStoreUrlError when the setting is not a usable Redis URL.
 */
export function storeLocationFromEnv(env: NodeJS.ProcessEnv = process.env, setting: string | undefined = env[STORE_ENV_VAR]): StoreLocation {
  const chosen = setting?.trim() ?? "";
  if (chosen === "") return { kind: "file", dataDir: resolveDataDir(env) };
  if (!isRedisUrl(chosen)) throw new InvalidStoreUrlError(JSON.stringify(chosen.slice(0, 200)), "it is not a redis:// or rediss:// URL");
  const { url, shown } = parseRedisUrl(chosen);
  return { kind: "redis", url, shown };
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Limits that differ from the defaults. */
  limits?: Partial<Limits>;
  /** Where warnings go. Default: one line on stderr. */
  warn?: (message: string) => void;
}

/** A store opened by {@link openStore}: the store, its limits, and how to let it go. */
export interface OpenedStore {
  store: ChannelStore;
  limits: Readonly<Limits>;
  /** Closes its connections (nothing for the file store). */
  close(): Promise<void>;
}

/**
 * Opens the store at `location` for a server. The Redis store connects in the background:
 * calls fail with a clear error until Redis answers, and it warns about settings that
 * could lose data once it does.
 * @throws InvalidStoreUrlError.
 */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  if (location.kind === "redis") {
    const { RedisStore } = await import("./redis/redis-store.js");
    const store = new RedisStore({ url: location.url, limits: options.limits, warn: options.warn });
    return { store, limits: store.limits, close: () => store.close() };
  }
  const { FileStore } = await import("./file/file-store.js");
  const store = new FileStore({ dataDir: location.dataDir, limits: options.limits, warn: options.warn });
  return { store, limits: store.limits, close: async () => undefined };
}

/** A read-only view opened by {@link openReader}, and how to let it go. */
export interface OpenedReader {
  reader: ChannelReader;
  /** Closes its connections (nothing for the file store). */
  close(): Promise<void>;
}

/** A read-only view of the store at `location` (no lock, no write, no repair). */
export async function openReader(location: StoreLocation): Promise<OpenedReader> {
  if (location.kind === "redis") {
    const { RedisReader } = await import("./redis/reader.js");
    const reader = new RedisReader({ url: location.url });
    return { reader, close: () => reader.close() };
  }
  const { FileQueueReader } = await import("./file/queue-reader.js");
  return { reader: new FileQueueReader(location.dataDir), close: async () => undefined };
}

/** How a person would name the store at `location` in a message: its data directory, or the Redis URL without its password. */
export function describeLocation(location: StoreLocation): string {
  return location.kind === "redis" ? `the Redis store at ${location.shown}` : `the data directory ${location.dataDir}`;
}

/** A few words for a start-up banner: `data in <dir>`, or `channels in the Redis store at <url>` (without the password). */
export function bannerLocation(location: StoreLocation): string {
  return location.kind === "redis" ? `channels in ${describeLocation(location)}` : `data in ${location.dataDir}`;
}

/**
 * Why a read-only user (the watcher) cannot use the store at `location`, or `undefined`
 * when it can: for the file store, a data directory that no server has made yet (most
 * often a different `BACKCHANNEL_HOME`) or cannot read; for Redis, a server that does
 * not answer within 2 s.
 */
export async function unusableLocation(location: StoreLocation): Promise<string | undefined> {
  if (location.kind === "redis") return unreachableRedis(location);
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

async function unreachableRedis(location: { url: string; shown: string }): Promise<string | undefined> {
  const { RedisReader } = await import("./redis/reader.js");
  const reader = new RedisReader({ url: location.url });
  try {
    await reader.ping();
    return undefined;
  } catch (error) {
    return `${(error as Error).message}. Is BACKCHANNEL_STORE the same as the server's?`;
  } finally {
    await reader.close();
  }
}
