/**
 * Which store a process uses, and opening it. The file store in the data directory is
 * the default; `BACKCHANNEL_STORE=redis://…` (or `serve --store <url>`) chooses the Redis
 * store. A store's modules are loaded only when it is chosen (dynamic imports), so that
 * the watcher and the status line load no Redis client over the file store, and no lock
 * library over Redis.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Limits } from "../core/limits.js";
import { resolveDataDir } from "../core/paths.js";
import { isRedisUrl, parseRedisUrl, InvalidStoreUrlError } from "./redis/location.js";
import type { ChannelReader, ChannelStore } from "./store.js";

/**
 * Where the channels are: a data directory of the file store, or a Redis store (with
 * `file`, the file its URL was read from).
 */
export type StoreLocation = { kind: "file"; dataDir: string } | RedisLocation;

/** A Redis store: `url` with its credentials, `shown` without the password, `file` the file it came from. */
export type RedisLocation = { kind: "redis"; url: string; shown: string; file?: string };

/** The environment variable that chooses the store. */
export const STORE_ENV_VAR = "BACKCHANNEL_STORE";

/**
 * The environment variable naming a file that holds the Redis URL: a URL with a password
 * stays out of command lines, and the watcher command can name the file instead.
 */
export const STORE_FILE_ENV_VAR = "BACKCHANNEL_STORE_FILE";

/** The environment variable naming the file store's data directory. */
export const HOME_ENV_VAR = "BACKCHANNEL_HOME";

/** A store URL file is a line; anything longer is not one. */
const MAX_STORE_FILE_BYTES = 4096;

/**
 * The store this process is configured for: `setting` (from `serve --store`) or else
 * `$BACKCHANNEL_STORE` when it is a Redis URL; else the URL in the file
 * `$BACKCHANNEL_STORE_FILE` names; when none is set, the file store in the data directory
 * (`$BACKCHANNEL_HOME`, else the per-user default).
 * @throws InvalidStoreUrlError when the setting is not a usable Redis URL, or the file cannot be read or holds none.
 */
export function storeLocationFromEnv(env: NodeJS.ProcessEnv = process.env, setting: string | undefined = env[STORE_ENV_VAR]): StoreLocation {
  const chosen = setting?.trim() ?? "";
  if (chosen !== "") return redisLocation(chosen);
  const file = env[STORE_FILE_ENV_VAR]?.trim() ?? "";
  if (file !== "") return storeFileLocation(file);
  return { kind: "file", dataDir: resolveDataDir(env) };
}

/** How a command line names a store: at most one of these (see {@link storeLocationFromOptions}). */
export interface StoreOptions {
  /** A data directory (the file store), as `$BACKCHANNEL_HOME`. */
  home?: string;
  /** A Redis URL, as `$BACKCHANNEL_STORE`. */
  store?: string;
  /** A file holding a Redis URL, as `$BACKCHANNEL_STORE_FILE`. */
  storeFile?: string;
}

/**
 * The store `options` name, else the environment's ({@link storeLocationFromEnv}). A
 * `store` URL without a password borrows the one of `$BACKCHANNEL_STORE` when that names
 * the same server and database: the watcher command leaves passwords out (see
 * {@link watcherWhere}), and a shell that has them in its environment still connects.
 * @throws InvalidStoreUrlError as {@link storeLocationFromEnv}.
 */
export function storeLocationFromOptions(options: StoreOptions, env: NodeJS.ProcessEnv = process.env): StoreLocation {
  if (options.home !== undefined) return { kind: "file", dataDir: resolve(options.home) };
  if (options.storeFile !== undefined) return storeFileLocation(options.storeFile);
  if (options.store === undefined) return storeLocationFromEnv(env);
  const given = redisLocation(options.store);
  const fromEnv = env[STORE_ENV_VAR]?.trim() ?? "";
  if (new URL(given.url).password !== "" || !isRedisUrl(fromEnv)) return given;
  const withPassword = redisLocation(fromEnv);
  return withoutPassword(withPassword.url) === withoutPassword(given.url) ? withPassword : given;
}

/**
 * The words a watcher command needs to reach the store at `location` from a shell that
 * does not have this process's environment (the agent's shell has not): `--home <dir>`
 * when `$BACKCHANNEL_HOME` chose the data directory, `--store-file <file>`, or `--store
 * <url>` without its password. `warning` says what to do when that password matters.
 */
export function watcherWhere(location: StoreLocation, env: NodeJS.ProcessEnv = process.env): { where: string[]; warning?: string } {
  if (location.kind === "file") return { where: env[HOME_ENV_VAR] ? ["--home", resolve(location.dataDir)] : [] };
  if (location.file !== undefined) return { where: ["--store-file", resolve(location.file)] };
  const where = ["--store", withoutPassword(location.url)];
  if (new URL(location.url).password === "") return { where };
  return {
    where,
    warning:
      `the watcher command handed to the agent names ${location.shown} without its password, so the agent's watcher connects only ` +
      `where ${STORE_ENV_VAR} holds it. To hand over the whole URL, put it in a file only you can read and set ${STORE_FILE_ENV_VAR} to that file instead`,
  };
}

/**
 * The environment that makes a child process use the store at `location` whatever
 * `env` chose: `env` with the store's variables set for it and the others removed
 * (`$BACKCHANNEL_HOME` stays for a Redis store: it still names where this machine's own
 * files are). A Redis URL goes in the environment, never on a command line, where any
 * user of the machine can read it.
 */
export function storeEnvironment(location: StoreLocation, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { [STORE_ENV_VAR]: _store, [STORE_FILE_ENV_VAR]: _file, ...rest } = env;
  if (location.kind === "file") return { ...rest, [HOME_ENV_VAR]: resolve(location.dataDir) };
  if (location.file !== undefined) return { ...rest, [STORE_FILE_ENV_VAR]: resolve(location.file) };
  return { ...rest, [STORE_ENV_VAR]: location.url };
}

function redisLocation(setting: string): RedisLocation {
  if (!isRedisUrl(setting)) throw new InvalidStoreUrlError(JSON.stringify(setting.slice(0, 200)), "it is not a redis:// or rediss:// URL");
  const { url, shown } = parseRedisUrl(setting);
  return { kind: "redis", url, shown };
}

/** The Redis URL in the file at `path`: one line, at most 4 KiB. */
function storeFileLocation(path: string): RedisLocation {
  const shown = `in ${JSON.stringify(path.slice(0, 200))}`;
  let text: string;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw new InvalidStoreUrlError(shown, "it is not a file");
    if (stats.size > MAX_STORE_FILE_BYTES) throw new InvalidStoreUrlError(shown, `the file is larger than ${MAX_STORE_FILE_BYTES} bytes`);
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    if (error instanceof InvalidStoreUrlError) throw error;
    throw new InvalidStoreUrlError(shown, `the file cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (!isRedisUrl(text)) throw new InvalidStoreUrlError(shown, "the file does not hold a redis:// or rediss:// URL");
  return { ...redisLocation(text), file: path };
}

/** `url` with no password (the user name, if any, is kept). */
function withoutPassword(url: string): string {
  const copy = new URL(url);
  copy.password = "";
  return copy.href.replace(/\/$/, "");
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

/**
 * A read-only view of the store at `location` (no lock, no write, no repair).
 * @param warn where a store's notes go (Redis refusing its wake-ups, and the grant that ends it). Default: nowhere.
 */
export async function openReader(location: StoreLocation, warn?: (message: string) => void): Promise<OpenedReader> {
  if (location.kind === "redis") {
    const { RedisReader } = await import("./redis/reader.js");
    const reader = new RedisReader({ url: location.url, warn });
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
