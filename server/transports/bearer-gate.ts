/**
 * The bearer-token gate of `serve --http --auth …` (docs/ARCHITECTURE.md, "Remote
 * serving"), built on the SDK's own helpers: `verifyBearerToken` parses the header, runs
 * the verifier and checks the token's resource, scope and expiry;
 * `bearerAuthChallengeResponse` answers a refusal (401 `invalid_token` or 403
 * `insufficient_scope`, with `WWW-Authenticate: Bearer … resource_metadata="…"`).
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
import { REQUIRED_SCOPE } from "../auth/verifiers.js";
import { sendResponse } from "./send-response.js";

/** Checks a request's bearer token: resolves with what it proves, or answers the refusal itself and resolves with `undefined`. */
export type BearerGate = (req: IncomingMessage, res: ServerResponse) => Promise<AuthInfo | undefined>;

/** Options of {@link bearerGate}. */
export interface BearerGateOptions {
  /** Checks a token and names its principal (../auth/verifiers.ts). */
  verifier: OAuthTokenVerifier;
  /** This server's public URL: the resource every token must be for. */
  resource: URL;
  /** Told of a failure that is not the caller's (an unusable token file, an issuer that cannot be reached): the caller gets a bare 500. */
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
      if (!(error instanceof OAuthError)) options.onerror(error instanceof Error ? error : new Error(String(error)));
      await sendResponse(res, bearerAuthChallengeResponse(error, check));
      return undefined;
    }
  };
}
