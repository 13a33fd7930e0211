/**
 * The bearer-token gate of `serve --http --auth …` (docs/ARCHITECTURE.md, "Remote
 * serving"), built on the SDK's own helpers: `verifyBearerToken` parses the header, runs
 * the verifier and checks the token's resource, scope and expiry;
 * `bearerAuthChallengeResponse` answers a refusal (401 `invalid_token` or 403
 * `insufficient_scope`, with `WWW-Authenticate: Bearer … resource_metadata="…"`).
 * A token that cannot be judged because the issuer's keys cannot be had is neither: it
 * gets 503 with `Retry-After`, so that a client tries again rather than drop its token.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  type OAuthTokenVerifier,
  verifyBearerToken,
} from "@modelcontextprotocol/server";
import { KeysUnavailableError, REQUIRED_SCOPE } from "../auth/verifiers.js";
import { sendResponse } from "./send-response.js";

/** Checks a request's bearer token: resolves with what it proves, or answers the refusal itself and resolves with `undefined`. */
export type BearerGate = (req: IncomingMessage, res: ServerResponse) => Promise<AuthInfo | undefined>;

/** Options of {@link bearerGate}. */
export interface BearerGateOptions {
  /** Checks a token and names its principal (../auth/verifiers.ts). */
  verifier: OAuthTokenVerifier;
  /** This server's public URL: the resource every token must be for. */
  resource: URL;
  /** Told of a failure that is not the caller's: an unusable token file (the caller gets a bare 500), an issuer whose keys cannot be had (503). */
  onerror: (error: Error) => void;
}

/**
 * A gate that lets through requests whose `Authorization: Bearer` token `options.verifier`
 * accepts, for `options.resource`, with the `backchannel` scope, unexpired.
 */
export function bearerGate(options: BearerGateOptions): BearerGate {
  const check = {
    verifier: options.verifier,
    requiredScopes: [REQUIRED_SCOPE],
    expectedResource: options.resource,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(options.resource),
  };
  return async (req, res) => {
    try {
      return await verifyBearerToken(req.headers.authorization, check);
    } catch (error) {
      if (error instanceof KeysUnavailableError) {
        if (error.failure) options.onerror(error);
        await sendResponse(res, keysUnavailableResponse(error));
        return undefined;
      }
      if (!(error instanceof OAuthError)) options.onerror(error instanceof Error ? error : new Error(String(error)));
      await sendResponse(res, bearerAuthChallengeResponse(error, check));
      return undefined;
    }
  };
}

/** 503 with `Retry-After` (whole seconds, at least 1) and an OAuth error body that says when to try again. */
function keysUnavailableResponse(error: KeysUnavailableError): Response {
  const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  const description = `could not get the signing keys of the token's issuer; try again in ${seconds} s`;
  return Response.json(
    { error: "temporarily_unavailable", error_description: description },
    { status: 503, headers: { "retry-after": String(seconds) } },
  );
}
