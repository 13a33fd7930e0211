/**
 * A real OAuth issuer for the tests, as small as one can be: an HTTP server on loopback
 * that publishes its metadata (RFC 8414) and one ES256 key (JWKS), and signs access
 * tokens with that key. `signForeign` signs with another key, which it never publishes.
 */
import type { Server } from "node:http";
import { createServer } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { listen } from "../../server/transports/http.js";

/** A running test issuer. */
export interface TestIssuer {
  /** Its issuer identifier, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** A JWT with `claims` (and `iat`), signed with the published key. */
  sign(claims: Record<string, unknown>): Promise<string>;
  /** The same, signed with a key the issuer does not publish. */
  signForeign(claims: Record<string, unknown>): Promise<string>;
  /** Stops the server. */
  close(): void;
}

/** Starts an issuer on a free loopback port. */
export async function startTestIssuer(): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const other = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  let url = "";
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/oauth-authorization-server") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
    } else if (req.url === "/jwks") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.writeHead(404).end();
    }
  });
  url = (await listen(server)).href.replace(/\/$/, "");
  const signer = (key: CryptoKey) => (claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).setIssuedAt().sign(key);
  return { url, sign: signer(privateKey), signForeign: signer(other.privateKey), close: () => server.close() };
}
