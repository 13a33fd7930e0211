/**
 * The address of a Redis store, `redis://[user:pass@]host[:port][/db]` or `rediss://…`
 * (TLS), checked and shown without its password. Loads no Redis client: the watcher
 * and the status line use it before they know which store they read.
 */
import { CallerError } from "../../core/errors.js";

/** What a store URL should look like, for error messages. */
export const REDIS_URL_FORM = "redis://[user:password@]host[:port][/db] (rediss:// for TLS)";

/** A store setting that is not a usable Redis URL. */
export class InvalidStoreUrlError extends CallerError {
  override readonly name = "InvalidStoreUrlError";
  override readonly code = "INVALID_STORE_URL";
  constructor(
    readonly shown: string,
    reason: string,
  ) {
    super(`the store ${shown} is not usable: ${reason}. Use ${REDIS_URL_FORM}, or leave BACKCHANNEL_STORE unset for the file store`);
  }
}

/** A checked Redis URL. */
export interface RedisAddress {
  /** The URL as given, with the credentials (what the client connects with). */
  url: string;
  /** The URL with the password replaced by `***`: safe to print and to put in errors. */
  shown: string;
  /** The database number (0 when the URL names none). */
  db: number;
  /** Whether the connection uses TLS (`rediss://`). */
  tls: boolean;
  /** The Redis user the URL names, or `default` (Redis's own) when it names none. */
  user: string;
}

/** True when `setting` names a Redis store (starts with `redis://` or `rediss://`, in any case). */
export function isRedisUrl(setting: string): boolean {
  return /^rediss?:\/\//i.test(setting.trim());
}

/**
 * Checks a Redis store URL.
 * @throws InvalidStoreUrlError when it is not `redis://` or `rediss://`, names no host, or has a path other than a database number, a query or a fragment.
 */
export function parseRedisUrl(setting: string): RedisAddress {
  const text = setting.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidStoreUrlError(redactUnparsed(text), "it is not a URL");
  }
  const shown = redact(url);
  if (url.protocol !== "redis:" && url.protocol !== "rediss:")
    throw new InvalidStoreUrlError(shown, `${url.protocol}// is not redis:// or rediss://`);
  if (url.hostname === "") throw new InvalidStoreUrlError(shown, "it names no host");
  if (url.search !== "" || url.hash !== "") throw new InvalidStoreUrlError(shown, "it has a query or a fragment, which backchannel does not read");
  const path = url.pathname.replace(/^\//, "");
  if (path !== "" && !/^[0-9]{1,5}$/.test(path))
    throw new InvalidStoreUrlError(shown, `its path ${JSON.stringify(url.pathname)} is not a database number`);
  const user = url.username === "" ? "default" : decodeURIComponent(url.username);
  return { url: text, shown, db: path === "" ? 0 : Number(path), tls: url.protocol === "rediss:", user };
}

/** `url` as text with its password (if any) replaced by `***`. */
function redact(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password !== "") copy.password = "***";
  return copy.href.replace(/\/$/, "");
}

/** Something that does not parse as a URL, without anything that could be a password (between `:` and `@`). */
function redactUnparsed(text: string): string {
  return JSON.stringify(text.replace(/:[^:@/]*@/, ":***@").slice(0, 200));
}
