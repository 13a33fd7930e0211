/**
 * Where `serve --http` may listen. It has no authentication, so only where nothing
 * beyond this machine can reach it. This module loads nothing else (no SDK), so that
 * the command refuses an address at once, before the server is loaded.
 */
import { isIP } from "node:net";
import { CallerError } from "../../core/errors.js";

/** Thrown for an address the HTTP server will not listen on; the message says why and what to use. */
export class BindAddressError extends CallerError {
  override readonly name = "BindAddressError";
}

/**
 * Why the HTTP server may not listen on `host`, or `undefined` when it may: only a
 * loopback address (127.0.0.0/8, ::1, ::ffff:127.x.x.x) or `localhost`.
 *
 * This is where a remote mode will plug in: given authentication to check callers
 * with, any address will do. Until it exists there is nothing to pass.
 */
export function bindRefusal(host: string): string | undefined {
  if (isLoopback(host)) return undefined;
  return (
    `refusing to listen on ${host}, which is not a loopback address: the HTTP server has no authentication, ` +
    "so it listens only where this machine alone can reach it. Use --host 127.0.0.1 (the default), ::1 or localhost, or stdio; " +
    "remote access with authentication is not available yet"
  );
}

function isLoopback(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) !== 6) return false;
  // The URL parser writes an IPv6 address in its shortest form: [::1], [::ffff:7f00:1].
  const canonical = new URL(`http://[${bare}]/`).hostname;
  return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}
