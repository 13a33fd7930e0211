/**
 * Unit tests of the pure parts of remote serving: which `serve --http` options go
 * together and where it may listen, the key spaces of principals in Redis, and the
 * appends window of the principal limits and the turns of its store operations.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_LIMITS } from "../../core/limits.js";
import { HttpAuthOptionsError, resolveHttpAuth } from "../../server/auth/http-auth.js";
import { principalNamespace } from "../../server/auth/principal.js";
import { BindAddressError, bindRefusal, isLoopback } from "../../server/transports/bind-address.js";
import { PrincipalLimitError } from "../../store/errors.js";
import { PrincipalUsage, REFRESH_MS } from "../../store/principal-limits.js";
import { FileStore } from "../../store/file/file-store.js";
import { appendedBytes } from "../../store/validate.js";
import { tempDataDir } from "../support/helpers.js";
import { principalKeys, principalOfKey, ROOT_KEYS } from "../../store/redis/keys.js";

describe("serve --http options", () => {
  test("loopback needs nothing; any other address needs authentication and a public URL", () => {
    assert.deepEqual(resolveHttpAuth({}), { auth: { mode: "none", insecure: false }, publicUrl: undefined });
    for (const host of ["127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"]) assert.ok(isLoopback(host), host);
    for (const host of ["0.0.0.0", "::", "192.0.2.1", "example.com", "::ffff:192.0.2.1"]) {
      assert.ok(!isLoopback(host), host);
      assert.match(bindRefusal(host, false) ?? "", /not a loopback address, with no authentication/);
      assert.equal(bindRefusal(host, true), undefined);
      assert.throws(() => resolveHttpAuth({ host }), BindAddressError);
      assert.throws(() => resolveHttpAuth({ host, auth: "tokens" }), /needs --public-url/);
    }
    const remote = resolveHttpAuth({ host: "0.0.0.0", auth: "tokens", tokens: "/etc/bc/tokens.json", publicUrl: "https://bc.example/mcp" });
    assert.deepEqual(remote.auth, { mode: "tokens", tokenFile: "/etc/bc/tokens.json" });
    assert.equal(remote.publicUrl?.href, "https://bc.example/mcp");
    assert.deepEqual(resolveHttpAuth({ host: "0.0.0.0", insecureNoAuth: true, publicUrl: "http://10.0.0.5:8080/mcp" }).auth, {
      mode: "none",
      insecure: true,
    });
  });

  test("options that do not go together are refused, saying what to pass", () => {
    const refusals: [Parameters<typeof resolveHttpAuth>[0], RegExp][] = [
      [{ auth: "basic" }, /--auth takes "tokens" or "oauth"/],
      [{ auth: "tokens", insecureNoAuth: true }, /contradict/],
      [{ tokens: "t.json" }, /--tokens goes with --auth tokens/],
      [{ auth: "tokens", issuer: "https://issuer.example" }, /--issuer and --jwks-url go with --auth oauth/],
      [{ auth: "oauth", publicUrl: "https://bc.example/mcp" }, /needs --issuer/],
      [{ auth: "oauth", issuer: "https://issuer.example" }, /needs --public-url/],
      [{ auth: "oauth", issuer: "https://issuer.example?x=1", publicUrl: "https://bc.example/mcp" }, /query or a fragment/],
      [{ auth: "oauth", issuer: "issuer", publicUrl: "https://bc.example/mcp" }, /is not a URL/],
      [{ auth: "tokens", publicUrl: "ftp://bc.example/mcp" }, /not an http/],
      [{ auth: "tokens", publicUrl: "https://user:pw@bc.example/mcp" }, /user name/],
    ];
    for (const [args, message] of refusals)
      assert.throws(
        () => resolveHttpAuth(args),
        (error: Error) => error instanceof HttpAuthOptionsError && message.test(error.message),
      );
    const oauth = resolveHttpAuth({
      auth: "oauth",
      issuer: "https://issuer.example",
      jwksUrl: "https://issuer.example/keys",
      publicUrl: "https://bc.example/mcp",
    });
    assert.deepEqual(oauth.auth, { mode: "oauth", issuer: "https://issuer.example", jwksUrl: new URL("https://issuer.example/keys") });
  });
});

describe("principal key spaces in Redis", () => {
  test("no name or SCAN pattern of one space reaches another's", () => {
    const alice = principalKeys(principalNamespace("alice"));
    const bob = principalKeys(principalNamespace("bob"));
    const meta = { root: ROOT_KEYS.channel("c1").meta, alice: alice.channel("c1").meta, bob: bob.channel("c1").meta };
    assert.equal(new Set(Object.values(meta)).size, 3);
    assert.equal(meta.alice, `bc:p:${principalNamespace("alice")}:{c1}:meta`, "the channel id stays the hash tag");
    const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
    for (const [space, own] of [
      [ROOT_KEYS, meta.root],
      [alice, meta.alice],
      [bob, meta.bob],
    ] as const) {
      const matched = Object.values(meta).filter((key) => glob(space.metaPattern).test(key));
      assert.deepEqual(matched, [own]);
      assert.equal(space.channelIdOfMeta(own), "c1");
    }
    assert.equal(alice.channelIdOfMeta(meta.bob), undefined);
    assert.equal(principalOfKey(meta.alice), principalNamespace("alice"));
    assert.equal(principalOfKey(meta.root), undefined);
    assert.throws(() => principalKeys("../x"), /invalid principal namespace/);
  });
});

describe("the appends limit of a principal", () => {
  test("counts a sliding minute and says when the oldest append leaves it", () => {
    let now = 0;
    const usage = new PrincipalUsage({ ...DEFAULT_LIMITS, maxPrincipalAppendsPerMinute: 3 }, undefined, () => now);
    for (now of [1000, 2000, 3000]) usage.admitAppend();
    now = 30_000;
    assert.throws(
      () => usage.admitAppend(),
      (error: PrincipalLimitError) => error.limit === "appends" && error.retryAfterMs === 31_000 && /Try again in 31 s\./.test(error.message),
    );
    now = 61_000;
    usage.admitAppend();
    now = 61_500;
    assert.throws(() => usage.admitAppend(), PrincipalLimitError);
  });
});

describe("the bytes limit of a principal", () => {
  test("room freed by reading is seen once the count is REFRESH_MS old, not before", async () => {
    const { dir, cleanup } = await tempDataDir();
    try {
      const store = new FileStore({ dataDir: dir });
      let now = 0;
      const usage = new PrincipalUsage({ ...DEFAULT_LIMITS, maxPrincipalBytes: 20_000 }, undefined, () => now);
      const big = { text: "x".repeat(9000) };
      const send = async () => {
        await usage.admitBytes(store, appendedBytes("big", big));
        await store.append("c-4", "ui", "big", big);
      };
      await send();
      await send();
      await assert.rejects(send(), (error: PrincipalLimitError) => error.limit === "bytes");
      await store.poll("c-4", "ui", { after: 2 });
      now += REFRESH_MS - 1;
      await assert.rejects(send(), (error: PrincipalLimitError) => error.limit === "bytes", "the count is not read again before REFRESH_MS");
      now += 1;
      await send();
    } finally {
      await cleanup();
    }
  });
});

describe("the turns of a principal's store operations", () => {
  test("run one at a time, in order, each after a rest twice as long as the one before, and others' work runs in between", async () => {
    const usage = new PrincipalUsage(DEFAULT_LIMITS);
    const events: { what: string; at: number }[] = [];
    const note = (what: string) => events.push({ what, at: performance.now() });
    /** Holds the thread for `ms`, as a read of a full queue does. */
    const hold = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const operations = [0, 1, 2, 3].map((index) =>
      usage.inTurn(async () => {
        note(`start ${index}`);
        hold(20);
        note(`end ${index}`);
        return index;
      }),
    );
    // Another caller's work, one macrotask after another, as its I/O would come.
    let done = false;
    const other = (async () => {
      while (!done) {
        await new Promise((resolve) => setImmediate(resolve));
        note("other");
      }
    })();
    assert.deepEqual(await Promise.all(operations), [0, 1, 2, 3]);
    done = true;
    await other;
    const own = events.filter((event) => event.what !== "other").map((event) => event.what);
    assert.deepEqual(own, ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    for (let index = 0; index < 3; index++) {
      const ended = events.findIndex((event) => event.what === `end ${index}`);
      const next = events.findIndex((event) => event.what === `start ${index + 1}`);
      assert.ok(
        events.slice(ended, next).some((event) => event.what === "other"),
        `nothing else ran between operations ${index} and ${index + 1}`,
      );
      // Timers never fire early: the rest is at least twice the 20 ms the operation held the thread (less a millisecond of rounding).
      assert.ok(events[next]!.at - events[ended]!.at >= 39, `a rest of ${events[next]!.at - events[ended]!.at} ms after a 20 ms operation`);
    }
  });
});
