/**
 * The OAuth 2.0 Protected Resource Metadata of `serve --http --auth …` (RFC 9728): the
 * document a client fetches, from the `resource_metadata` of a 401, to learn which
 * authorization server issues tokens for this server and which scope they need.
 *
 * It is served at `/.well-known/oauth-protected-resource` and at the path-suffixed form
 * RFC 9728 §3.1 derives from the public URL (`/.well-known/oauth-protected-resource/mcp`
 * for `https://host/mcp`). The SDK's `oauthMetadataResponse` needs the authorization
 * server's whole metadata, which a resource server that only checks JWTs does not have,
 * and it knows no token mode; the document is small, so it is built here from the SDK's type.
 */
import type { ServerResponse } from "node:http";
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/server";
import type { HttpAuth } from "../auth/http-auth.js";
import { REQUIRED_SCOPE } from "../auth/verifiers.js";

/** The well-known path of the document (RFC 9728 §3). */
export const METADATA_PATH = "/.well-known/oauth-protected-resource";

/**
 * The metadata of the resource at `resource` under `auth`: its issuer as the one
 * authorization server (OAuth mode; none in token mode, whose tokens come from
 * `backchannel token add`), the `backchannel` scope, and tokens in the header only.
 */
export function protectedResourceMetadata(resource: URL, auth: HttpAuth): OAuthProtectedResourceMetadata {
  return {
    resource: resource.href,
    ...(auth.mode === "oauth" ? { authorization_servers: [auth.issuer] } : {}),
    scopes_supported: [REQUIRED_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "backchannel",
  };
}

/** Whether `pathname` is where the document of `resource` is served: the bare well-known path, its `/mcp` form, or the public URL's own. */
export function isMetadataPath(pathname: string, resource: URL, mcpPath: string): boolean {
  const own = resource.pathname.replace(/\/$/, "");
  return pathname === METADATA_PATH || pathname === `${METADATA_PATH}${mcpPath}` || (own !== "" && pathname === `${METADATA_PATH}${own}`);
}

/** Answers a request for the document: GET or HEAD (readable from any origin, as public metadata is), 204 to a CORS preflight, 405 otherwise. */
export function sendMetadata(method: string | undefined, res: ServerResponse, metadata: OAuthProtectedResourceMetadata): void {
  const cors = { "access-control-allow-origin": "*", "access-control-allow-methods": "GET, HEAD, OPTIONS" };
  if (method === "OPTIONS") {
    res.writeHead(204, cors).end();
  } else if (method === "GET" || method === "HEAD") {
    const body = JSON.stringify(metadata);
    res.writeHead(200, { ...cors, "content-type": "application/json", "cache-control": "max-age=3600" }).end(method === "GET" ? body : undefined);
  } else {
    res.writeHead(405, { ...cors, allow: "GET, HEAD, OPTIONS" }).end();
  }
}
