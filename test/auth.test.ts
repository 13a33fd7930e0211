/**
 * Authentication for remote serving: the token file and `backchannel token add` through
 * the real CLI, and both verifiers through the SDK's own bearer-auth helper, the JWT one
 * against a real issuer run here (an HTTP server publishing a key the test generates).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { verifyBearerToken } from "@modelcontextprotocol/server";
import { principalOf } from "../server/auth/principal.js";
import { defaultTokenFile } from "../server/auth/token-file.js";
import { jwtVerifier, REQUIRED_SCOPE, staticTokenVerifier } from "../server/auth/verifiers.js";
import { type TestIssuer, startTestIssuer } from "./support/test-issuer.js";
import { CLI, tempDataDir } from "./support/helpers.js";

let dataDir: string;
let cleanup: () => Promise<void>;
const resource = new URL("https://backchannel.example/mcp");

before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
});
after(async () => {
  await cleanup();
});

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, BACKCHANNEL_HOME: dataDir }, encoding: "utf8" });
}

describe("backchannel token add", () => {
  test("prints a new token once, as the last word, and stores only its hash in a 0600 file", async () => {
    const run = cli(["token", "add", "alice"]);
    assert.equal(run.status, 0, run.stderr);
    const token = run.stdout.trim().split(/\s+/).at(-1)!;
    assert.match(token, /^bc_[A-Za-z0-9_-]{43}$/);
    const path = defaultTokenFile(dataDir);
    const text = await readFile(path, "utf8");
    assert.ok(!text.includes(token), "the token itself is never stored");
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const second = cli(["token", "add", "alice"]).stdout.trim().split(/\s+/).at(-1)!;
    assert.notEqual(second, token, "every token is new");

    const verifier = staticTokenVerifier(path, resource);
    for (const good of [token, second]) assert.equal(principalOf(await verifyBearerToken(`Bearer ${good}`, { verifier })), "alice");
    await assert.rejects(verifyBearerToken(`Bearer ${token}x`, { verifier }), /unknown token/);
    await assert.rejects(verifyBearerToken(undefined, { verifier }), /Authorization/i);
  });

  test("refuses a bad principal and a token file others can read, saying what to do", async () => {
    const bad = cli(["token", "add", "../root"]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /invalid principal "\.\.\/root"/);
    const path = join(dataDir, "loose-tokens.json");
    await writeFile(path, JSON.stringify({ version: 1, tokens: [] }));
    await chmod(path, 0o644);
    const loose = cli(["token", "add", "bob", "--tokens", path]);
    assert.equal(loose.status, 1);
    assert.match(loose.stderr, /can be read or written by others \(mode 644\): run "chmod 600 .*loose-tokens\.json"/);
    await assert.rejects(verifyBearerToken("Bearer bc_x", { verifier: staticTokenVerifier(path, resource) }), /chmod 600/);
  });
});

describe("OAuth: JWT access tokens checked against the issuer's keys", () => {
  let issuer: TestIssuer;
  let issuerUrl: string;
  let sign: (claims: Record<string, unknown>) => Promise<string>;
  let foreign: (claims: Record<string, unknown>) => Promise<string>;

  before(async () => {
    issuer = await startTestIssuer();
    ({ url: issuerUrl, sign, signForeign: foreign } = issuer);
  });
  after(() => {
    issuer.close();
  });

  const claims = (extra: Record<string, unknown> = {}) => ({
    iss: issuerUrl,
    aud: resource.href,
    sub: "user-42",
    scope: `openid ${REQUIRED_SCOPE}`,
    exp: Math.floor(Date.now() / 1000) + 600,
    ...extra,
  });

  test("a token of the issuer, for this server, with the scope, names its subject as the principal", async () => {
    const verifier = jwtVerifier({ issuer: issuerUrl, resource });
    const info = await verifyBearerToken(`Bearer ${await sign(claims())}`, {
      verifier,
      requiredScopes: [REQUIRED_SCOPE],
      expectedResource: resource,
    });
    assert.equal(principalOf(info), "user-42");
    assert.deepEqual(info.scopes, ["openid", REQUIRED_SCOPE]);
  });

  test("refuses another audience, another issuer, an expired token, a foreign key, and a missing scope", async () => {
    const verifier = jwtVerifier({ issuer: issuerUrl, resource });
    const options = { verifier, requiredScopes: [REQUIRED_SCOPE], expectedResource: resource };
    const expired = Math.floor(Date.now() / 1000) - 60;
    await assert.rejects(verifyBearerToken(`Bearer ${await sign(claims({ aud: "https://other.example/mcp" }))}`, options), /aud claim/);
    await assert.rejects(verifyBearerToken(`Bearer ${await sign(claims({ iss: "https://evil.example" }))}`, options), /iss claim/);
    await assert.rejects(verifyBearerToken(`Bearer ${await sign(claims({ exp: expired }))}`, options), /expired/);
    await assert.rejects(verifyBearerToken(`Bearer ${await foreign(claims())}`, options), /not signed by the issuer/);
    await assert.rejects(verifyBearerToken(`Bearer ${await sign(claims({ scope: "openid" }))}`, options), (error: Error & { code?: string }) => {
      assert.equal(error.code, "insufficient_scope");
      return true;
    });
  });
});
