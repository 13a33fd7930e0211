/**
 * Where `serve --http` may listen: the one rule. On a loopback address it may run
 * without authentication, since only this machine reaches it; on any other address only
 * with authentication (`--auth tokens`, `--auth oauth`) or the deliberate
 * `--insecure-no-auth`. This module loads nothing else (no SDK), so that the command
 * refuses an address at once, before the server is loaded.
 */
import { isIP } from "node:net";
import { CallerError } from "../../core/errors.js";

/** Thrown for an address the HTTP server will not listen on; the message says why and what to use. */
export class BindAddressError extends CallerError {
  override readonly name = "BindAddressError";
  override readonly code = "UNSAFE_BIND_ADDRESS";
}

/**
 * Why the HTTP server may not listen on `host`, or `undefined` when it may: a loopback
 * address (127.0.0.0/8, ::1, ::ffff:127.x.x.x) or `localhost` always; any other address
 * only when `authenticated` (an `--auth` mode, or `--insecure-no-auth`).
 */
export function bindRefusal(host: string, authenticated: boolean): string | undefined {
  if (authenticated || isLoopback(host)) return undefined;
  return (
    `refusing to listen on ${host}, which is not a loopback address, with no authentication: anyone who reaches it could read and write every channel. ` +
    'Add --auth tokens (tokens from "backchannel token add <principal>") or --auth oauth --issuer URL, with --public-url URL; ' +
    "or use --host 127.0.0.1 (the default), ::1 or localhost, or stdio"
  );
}

/** Whether `host` is a loopback address or `localhost`. */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) !== 6) return false;
  // The URL parser writes an IPv6 address in its shortest form: [::1], [::ffff:7f00:1].
  const canonical = new URL(`http://[${bare}]/`).hostname;
  return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}
