/**
 * Listing many saved apps, through real processes on both stores: `serve --http --auth
 * tokens` with 1,000 apps of 256 KiB saved by one principal, listed 16 times at once
 * (`open_app {}` and `resources/list`) while another principal sends small messages. A
 * listing reads a page of summaries, each from the head of its record, never an app's
 * HTML (store/saved-app.ts): before, each listing read every app whole, and 16 of them
 * stalled the server for a minute at 1.2 GiB.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { APP_HTML_MAX_BYTES, SAVED_APP_LIST_PAGE } from "../core/limits.js";
import { principalNamespace } from "../server/auth/principal.js";
import { addToken, serveHttp, stopHttpServers } from "./support/http-serve.js";
import { structured } from "./support/helpers.js";
import { storeKinds } from "./support/stores.js";

const APPS = 1000;
const LISTINGS = 16;

after(stopHttpServers);

async function connect(url: URL, token: string): Promise<Client> {
  const client = new Client({ name: "saved-app-listing-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** The peak resident memory of process `pid` so far, in MiB. */
function peakRssMiB(pid: number): number {
  const kib = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kib / 1024);
}

interface Listed {
  apps: { name: string }[];
  total: number;
  more: number;
}

const nameOf = (i: number) => `app-${String(i).padStart(4, "0")}`;

for (const kind of storeKinds()) {
  describe(`many saved apps on the ${kind.name} store`, { skip: kind.skip }, () => {
    test(`${LISTINGS} listings of ${APPS} apps of 256 KiB at once read no HTML and hold no other principal up`, { timeout: 600_000 }, async (t) => {
      const fixture = await kind.start();
      const clients: Client[] = [];
      try {
        const store = fixture.open().forPrincipal(principalNamespace("lister"));
        const html = `<p>${"x".repeat(APP_HTML_MAX_BYTES - 16)}</p>`;
        for (let i = 0; i < APPS; i++) {
          await store.apps.write({ name: nameOf(i), title: `App ${i}`, description: "A big app.", html, saved_at: new Date().toISOString() });
        }
        const tokens = `${fixture.dataDir}/tokens.json`;
        const listerToken = addToken(tokens, "lister");
        const otherToken = addToken(tokens, "other");
        // Room for the apps saved above (about 257 MiB), and for the other principal's calls however fast they come.
        const served = await serveHttp(["--auth", "tokens", "--tokens", tokens], {
          ...fixture.env,
          BACKCHANNEL_MAX_PRINCIPAL_BYTES: String(1024 * 1024 * 1024),
          BACKCHANNEL_MAX_PRINCIPAL_APPENDS_PER_MINUTE: "1000000",
        });
        const lister = await connect(served.url, listerToken);
        const other = await connect(served.url, otherToken);
        clients.push(lister, other);
        assert.notEqual((await other.callTool({ name: "notify_ui", arguments: { channel_id: "beside", event: "e" } })).isError, true);

        const started = performance.now();
        const first = structured<Listed>(await lister.callTool({ name: "open_app", arguments: {} }));
        const oneMs = performance.now() - started;
        assert.equal(first.total, APPS);
        assert.equal(first.more, APPS - SAVED_APP_LIST_PAGE);
        assert.deepEqual(
          first.apps.map((app) => app.name),
          Array.from({ length: SAVED_APP_LIST_PAGE }, (_, i) => nameOf(i)),
        );
        const next = structured<Listed>(await lister.callTool({ name: "open_app", arguments: { after: first.apps.at(-1)!.name } }));
        assert.equal(next.apps[0]?.name, nameOf(SAVED_APP_LIST_PAGE), "the next page starts after the last one shown");
        assert.equal(
          (await lister.listResources()).resources.filter((resource) => resource.uri.startsWith("backchannel://apps/")).length,
          SAVED_APP_LIST_PAGE,
        );

        // Small calls of the other principal, one after another, while the listings run.
        let listing = true;
        let slowestMs = 0;
        let calls = 0;
        const beside = (async () => {
          while (listing) {
            const sent = performance.now();
            const answer = await other.callTool({ name: "notify_ui", arguments: { channel_id: "beside", event: "e" } });
            assert.notEqual(answer.isError, true, JSON.stringify(answer.content));
            slowestMs = Math.max(slowestMs, performance.now() - sent);
            calls += 1;
          }
        })();
        const burst = performance.now();
        const results = await Promise.all(
          Array.from({ length: LISTINGS }, (_, i) =>
            i % 2 === 0
              ? lister.callTool({ name: "open_app", arguments: {} }).then((result) => structured<Listed>(result).apps.length)
              : lister.listResources().then((result) => result.resources.filter((resource) => resource.uri.startsWith("backchannel://apps/")).length),
          ),
        );
        const burstMs = performance.now() - burst;
        listing = false;
        await beside;
        const peak = peakRssMiB(served.process.pid!);
        t.diagnostic(
          `${kind.name}: one listing ${oneMs.toFixed(0)} ms; ${LISTINGS} at once ${burstMs.toFixed(0)} ms; ` +
            `${calls} calls of another principal beside them, the slowest ${slowestMs.toFixed(0)} ms; the server's peak RSS ${peak} MiB`,
        );
        assert.deepEqual(results, Array(LISTINGS).fill(SAVED_APP_LIST_PAGE));
        // Safety nets for a loaded 2-core CI: reading the apps whole took seconds per listing and a minute for 16.
        assert.ok(oneMs < 3_000, `one listing took ${oneMs.toFixed(0)} ms`);
        assert.ok(burstMs < 10_000, `${LISTINGS} listings at once took ${burstMs.toFixed(0)} ms`);
        assert.ok(slowestMs < 2_000, `another principal's notify_ui took ${slowestMs.toFixed(0)} ms beside the listings`);
        assert.ok(peak < 400, `the server's peak RSS was ${peak} MiB`);
      } finally {
        await Promise.all(clients.map((client) => client.close()));
        stopHttpServers();
        await fixture.stop();
      }
    });
  });
}
