/**
 * How `serve --http` authenticates its callers, from its command-line options, checked
 * against where it listens (docs/ARCHITECTURE.md, "Remote serving"): on a loopback
 * address it may run without authentication; anywhere else only with an authentication
 * mode or the deliberate `--insecure-no-auth` (the rule is ../transports/bind-address.ts),
 * and with a public URL.
 *
 * This module loads nothing else (no SDK, no JOSE), so that the command refuses bad
 * options at once, before the server is loaded.
 */
import { CallerError } from "../../core/errors.js";
import { BindAddressError, bindRefusal, isLoopback } from "../transports/bind-address.js";

/** How callers are authenticated. */
export type HttpAuth =
  /** Nobody is: the loopback default, or `--insecure-no-auth`. */
  | { mode: "none"; insecure: boolean }
  /** Static bearer tokens from the token file at `tokenFile` (default: tokens.json in the data directory). */
  | { mode: "tokens"; tokenFile?: string }
  /** JWT access tokens of the OAuth 2.1 authorization server `issuer`, signed by a key of `jwksUrl` (default: from the issuer's metadata). */
  | { mode: "oauth"; issuer: string; jwksUrl?: URL };

/** The authentication options of `serve --http`, as given on the command line. */
export interface HttpAuthArgs {
  host?: string;
  auth?: string;
  tokens?: string;
  issuer?: string;
  jwksUrl?: string;
  publicUrl?: string;
  insecureNoAuth?: boolean;
}

/** What {@link resolveHttpAuth} makes of {@link HttpAuthArgs}. */
export interface HttpAuthSettings {
  auth: HttpAuth;
  /**
   * The server's public URL (`--public-url`): the resource the tokens are for (a JWT's
   * `aud`), and the Host and Origin it is reached by besides localhost. Default, on a
   * loopback address without OAuth: the URL it listens on.
   */
  publicUrl?: URL;
}

/** Thrown for `serve --http` options that do not go together or cannot be used; the message says what to pass. */
export class HttpAuthOptionsError extends CallerError {
  override readonly name = "HttpAuthOptionsError";
  override readonly code = "INVALID_AUTH_OPTIONS";
}

/** What `--insecure-no-auth` prints on stderr, every time. */
export const INSECURE_NO_AUTH_WARNING =
  "warning: --insecure-no-auth: anyone who can reach this address can read, write and delete every channel, " +
  "and read every document opened in the reader, with no token. Use it only on a network where you trust every machine; " +
  "otherwise use --auth tokens (backchannel token add <principal>) or --auth oauth.";

/**
 * The authentication `args` ask for, checked.
 * @throws HttpAuthOptionsError for options that do not go together (`--tokens` without
 *   `--auth tokens`, `--auth oauth` without `--issuer` or `--public-url`, …), a URL that
 *   is not one; BindAddressError for a non-loopback host without authentication.
 */
export function resolveHttpAuth(args: HttpAuthArgs): HttpAuthSettings {
  const host = args.host ?? "127.0.0.1";
  const publicUrl = args.publicUrl === undefined ? undefined : publicUrlOf(args.publicUrl);
  if (args.auth !== undefined && args.insecureNoAuth) {
    throw new HttpAuthOptionsError("--auth and --insecure-no-auth contradict each other: choose one");
  }
  if (args.tokens !== undefined && args.auth !== "tokens") throw new HttpAuthOptionsError("--tokens goes with --auth tokens");
  if ((args.issuer !== undefined || args.jwksUrl !== undefined) && args.auth !== "oauth") {
    throw new HttpAuthOptionsError("--issuer and --jwks-url go with --auth oauth");
  }
  let auth: HttpAuth;
  if (args.auth === undefined) {
    auth = { mode: "none", insecure: args.insecureNoAuth === true };
  } else if (args.auth === "tokens") {
    auth = { mode: "tokens", tokenFile: args.tokens };
  } else if (args.auth === "oauth") {
    if (args.issuer === undefined)
      throw new HttpAuthOptionsError("--auth oauth needs --issuer URL: the authorization server whose tokens it accepts");
    if (publicUrl === undefined) {
      throw new HttpAuthOptionsError(
        "--auth oauth needs --public-url URL: the URL clients reach this server by, which every token's audience (aud) must name",
      );
    }
    const issuer = urlOf("--issuer", args.issuer);
    if (issuer.search !== "" || issuer.hash !== "")
      throw new HttpAuthOptionsError(`--issuer ${args.issuer} has a query or a fragment; give the issuer identifier`);
    auth = { mode: "oauth", issuer: args.issuer, jwksUrl: args.jwksUrl === undefined ? undefined : urlOf("--jwks-url", args.jwksUrl) };
  } else {
    throw new HttpAuthOptionsError(`--auth takes "tokens" or "oauth", not ${JSON.stringify(args.auth.slice(0, 40))}`);
  }
  const refusal = bindRefusal(host, auth.mode !== "none" || auth.insecure);
  if (refusal) throw new BindAddressError(refusal);
  if (!isLoopback(host) && publicUrl === undefined) {
    throw new HttpAuthOptionsError(
      `--host ${host} needs --public-url URL: the URL clients reach this server by (e.g. https://backchannel.example.com/mcp), the only Host and Origin accepted besides localhost`,
    );
  }
  return { auth, publicUrl };
}

function publicUrlOf(text: string): URL {
  const url = urlOf("--public-url", text);
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new HttpAuthOptionsError(
      `--public-url ${text} has a query, a fragment or a user name; give the plain URL of the MCP endpoint, e.g. https://backchannel.example.com/mcp`,
    );
  }
  return url;
}

function urlOf(option: string, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HttpAuthOptionsError(`${option} ${JSON.stringify(text.slice(0, 200))} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new HttpAuthOptionsError(`${option} ${text} is not an http:// or https:// URL`);
  return url;
}
