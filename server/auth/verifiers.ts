/**
 * The two ways `serve --http` authenticates a bearer token, as the SDK's
 * `OAuthTokenVerifier`s (its bearer-auth helpers parse the header, check expiry,
 * audience and scopes, and answer 401/403 with the right challenge):
 *
 * - static tokens from the token file (./token-file.ts), for self-hosting;
 * - JWT access tokens of an OAuth 2.1 authorization server, checked against its JWKS
 *   (signature, `iss`, `aud` = this server's public URL, `exp`); the principal is `sub`.
 */
import { type AuthInfo, OAuthError, OAuthErrorCode, type OAuthTokenVerifier } from "@modelcontextprotocol/server";
import { createRemoteJWKSet, decodeJwt, errors as joseErrors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { withPrincipal } from "./principal.js";
import { principalOfToken, readTokenFile } from "./token-file.js";

/** How long a static token's verification counts (the SDK refuses tokens without an expiry); it is checked again on every request. */
const STATIC_TOKEN_VALIDITY_S = 60;

/** The scope every token must carry for backchannel (OAuth mode). */
export const REQUIRED_SCOPE = "backchannel";

/**
 * How long a failure to get the issuer's keys (its metadata or its key set) is
 * remembered: requests in that time fail at once instead of each asking the issuer again
 * (an unreachable issuer would otherwise cost two fetches per request, and a flood of
 * requests a flood of fetches).
 */
const KEYS_RETRY_MS = 30_000;

/**
 * The issuer's signing keys could not be had (its metadata or key set unreachable,
 * refused or malformed): the token can be neither accepted nor refused now. Not the
 * caller's fault, and not for good: the gate answers 503 with `Retry-After`.
 */
export class KeysUnavailableError extends Error {
  override readonly name = "KeysUnavailableError";
  constructor(
    /** When asking again can succeed, in ms from now. */
    readonly retryAfterMs: number,
    /** What failed, for the server's log; `undefined` when the failure is one remembered from an earlier request (already logged). */
    readonly failure?: Error,
  ) {
    super(`could not get the signing keys of the token's issuer${failure ? `: ${failure.message}` : " (an earlier attempt failed)"}`);
  }
}

/**
 * A verifier of the static tokens in the token file at `path`, read again on every
 * request (so that `token add` takes effect at once, and a file made unsafe since is refused).
 * @param resource this server's public URL, reported as each token's resource.
 */
export function staticTokenVerifier(path: string, resource: URL): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const principal = principalOfToken(readTokenFile(path), token);
      if (principal === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, "unknown token");
      const info: AuthInfo = {
        token,
        clientId: principal,
        scopes: [REQUIRED_SCOPE],
        expiresAt: Math.floor(Date.now() / 1000) + STATIC_TOKEN_VALIDITY_S,
        resource,
      };
      return withPrincipal(info, principal);
    },
  };
}

/** Options of {@link jwtVerifier}. */
export interface JwtVerifierOptions {
  /** The authorization server's issuer identifier (the `iss` every token must carry). */
  issuer: string;
  /** Where its signing keys are. Default: `jwks_uri` of its metadata (RFC 8414, then OpenID discovery). */
  jwksUrl?: URL;
  /** This server's public URL: the audience (`aud`) every token must name. */
  resource: URL;
}

/**
 * A verifier of JWT access tokens from `options.issuer`.
 * @throws (when verifying) OAuthError invalid_token for a token that is not one of the issuer's, expired, or for another audience.
 */
export function jwtVerifier(options: JwtVerifierOptions): OAuthTokenVerifier {
  const keys = issuerKeys(options);
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let payload: JWTPayload;
      try {
        // Read before any key is asked for (jose verifies a signature before it reads the
        // payload): a token that is not a JWT never costs a fetch, nor waits on the issuer.
        decodeJwt(token);
        ({ payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience: options.resource.href,
          requiredClaims: ["exp", "sub"],
        }));
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) throw new OAuthError(OAuthErrorCode.InvalidToken, describeJoseError(error));
        throw error;
      }
      // jose checks that `sub` is present, not what it holds; the principal must be a name.
      const principal = stringClaim(payload.sub);
      if (principal === undefined)
        throw new OAuthError(OAuthErrorCode.InvalidToken, "the token's sub claim is not accepted here: it must be a non-empty string");
      const info: AuthInfo = {
        token,
        clientId: stringClaim(payload.azp) ?? stringClaim(payload.client_id) ?? principal,
        scopes: scopesOf(payload),
        expiresAt: payload.exp!,
        resource: options.resource,
      };
      return withPrincipal(info, principal);
    },
  };
}

/**
 * The issuer's key set, asked for only when a token needs a key: `options.jwksUrl`, else
 * discovered once (concurrent requests share one discovery). A failure to discover or
 * fetch the keys is remembered for {@link KEYS_RETRY_MS}; a key the set does not hold is
 * the token's fault (jose's `JWKSNoMatchingKey`), not a failure.
 * @throws (when called) KeysUnavailableError for a failure, now or remembered.
 */
function issuerKeys(options: JwtVerifierOptions): JWTVerifyGetKey {
  let keySet: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  let failedUntil = 0;
  return async (header, token) => {
    if (Date.now() < failedUntil) throw new KeysUnavailableError(failedUntil - Date.now());
    keySet ??= (options.jwksUrl ? Promise.resolve(options.jwksUrl) : discoverJwksUrl(options.issuer)).then(
      (url) => createRemoteJWKSet(url),
      (error: unknown) => {
        // Discovered again once the failure is forgotten; a key set that failed to load fetches again by itself.
        keySet = undefined;
        throw error;
      },
    );
    try {
      return await (await keySet)(header, token);
    } catch (error) {
      if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) throw error;
      if (Date.now() < failedUntil) throw new KeysUnavailableError(failedUntil - Date.now());
      failedUntil = Date.now() + KEYS_RETRY_MS;
      throw new KeysUnavailableError(KEYS_RETRY_MS, error instanceof Error ? error : new Error(String(error)));
    }
  };
}

/** The token's scopes: `scope` (space-separated, RFC 9068) or `scp` (an array, as some issuers write it). */
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === "string") return payload.scope.split(" ").filter((scope) => scope !== "");
  if (Array.isArray(payload.scp)) return payload.scp.filter((scope): scope is string => typeof scope === "string");
  return [];
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** What was wrong with a token, in words a client's developer understands. */
function describeJoseError(error: InstanceType<typeof joseErrors.JOSEError>): string {
  if (error instanceof joseErrors.JWTExpired) return "the token has expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `the token's ${error.claim} claim is not accepted here`;
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWSSignatureVerificationFailed)
    return "the token is not signed by the issuer";
  return "the token is not a valid access token for this server";
}

/**
 * The `jwks_uri` of `issuer`, from its authorization server metadata (RFC 8414) or,
 * failing that, its OpenID Provider configuration.
 * @throws Error naming the issuer when neither gives one.
 */
async function discoverJwksUrl(issuer: string): Promise<URL> {
  const base = issuer.replace(/\/$/, "");
  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
    const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
    if (!response?.ok) continue;
    const metadata = (await response.json().catch(() => undefined)) as { jwks_uri?: unknown } | undefined;
    if (typeof metadata?.jwks_uri === "string") return new URL(metadata.jwks_uri);
  }
  throw new Error(`could not find the signing keys of ${issuer}: neither its OAuth nor its OpenID metadata names a jwks_uri; pass --jwks-url`);
}
