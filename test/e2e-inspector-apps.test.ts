/**
 * Agent-written apps in a real MCP Apps host nobody here wrote: MCP Inspector 2.12's
 * Apps tab in headless Chromium (test/support/inspector.ts), reaching backchannel
 * through mcp-proxy (the stdio server bridged to Streamable HTTP). The scripted agent
 * (test/support/app-agent.ts) reads the custom-apps recipe and opens each app with
 * `open_app` in Inspector's Apps tab, as a model's call goes through its host; it
 * reads and replies through its own `backchannel serve` process on the same data
 * directory, and the real watcher, run through the shell, wakes it. The user is
 * Playwright, clicking in the app's frame. The apps are driven as in the playground's
 * suite (test/support/example-apps.ts).
 *
 * Inspector's page loads once (it is CPU-bound, 8–15 s on 2 cores): the first app is
 * opened by a deep link, each next one in the same page, as a user opens the next app.
 * Inspector does not cancel the calls of the app it replaces: each replaced app's long
 * poll holds one of Chromium's 6 connections to Inspector's backend until the server
 * ends its wait (25 s), so once four apps were replaced within 25 s, opening the next
 * waits (measured: 14–20 s). The timed rounds run in the first two apps, before that.
 * The round trips are reported (`t.diagnostic`) with loose bounds only; the figures of
 * this host belong in bench/.
 */
import assert from "node:assert/strict";
import { after, before, describe, type TestContext, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { AgentApp, AppRecipe, type HostCall } from "./support/app-agent.js";
import {
  BROKEN_APP,
  checkBrokenApp,
  checkMarkupStaysText,
  pollRound,
  type RoundTrips,
  runPoll,
  savePoll,
  sendOrder,
  sortList,
  stampClicks,
} from "./support/example-apps.js";
import { browserSkipReason, connectServer, tempDataDir } from "./support/helpers.js";
import { type InspectorHost, type InspectorServer, type OpenedApp, startInspector, startServer } from "./support/inspector.js";
import { median } from "./support/reader-page.js";

/** No round trip may take longer than this (on an idle machine each is well under a second). */
const MAX_ROUND_TRIP_MS = 10_000;

/** How often the user votes, or sends the list's order, in one app: enough for a median. */
const ROUNDS = 5;

const skip = browserSkipReason();

describe("agent-written apps in MCP Inspector's Apps host", { skip, timeout: 600_000 }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let inspector: InspectorHost;
  let server: InspectorServer;
  let agent: Client;
  let recipe: AppRecipe;
  let shellEnv: Record<string, string>;
  /** The app Inspector shows now (the next one opens in its page). */
  let shown: OpenedApp | undefined;
  const apps: AgentApp[] = [];

  /**
   * The agent opens an app with `args`: its `open_app` call goes through Inspector's Apps
   * tab (a deep link for the first, the same page for the next), which shows the app.
   * Returns the agent's app and the app's frame, its clicks stamped.
   */
  async function open(args: Record<string, unknown>): Promise<{ app: AgentApp; opened: OpenedApp }> {
    let opened: OpenedApp | undefined;
    const call: HostCall = async (name, callArgs) => {
      opened = shown ? await shown.openAnother(name, callArgs) : await inspector.openApp(server, name, callArgs);
      shown = opened;
      const answer = await opened.answer(opened.opening);
      if (!answer.result) throw new Error(`${name} failed in Inspector: ${JSON.stringify(answer.error)}`);
      return answer.result;
    };
    const app = await AgentApp.open(agent, recipe, call, args, shellEnv);
    apps.push(app);
    await opened!.frame.locator("#app").waitFor({ state: "attached" });
    await stampClicks(opened!.frame);
    return { app, opened: opened! };
  }

  /** Reports `timings` of `name` and holds them to the loose bound. */
  function report(t: TestContext, name: string, timings: RoundTrips): void {
    const show = (values: number[]) => `median ${median(values)} ms (each: ${values.join(", ")})`;
    t.diagnostic(`${name} in Inspector: click → agent ${show(timings.woken)}; answer → screen ${show(timings.shown)}`);
    const slowest = Math.max(...timings.woken, ...timings.shown);
    assert.ok(slowest <= MAX_ROUND_TRIP_MS, `a round trip took ${slowest} ms (${JSON.stringify(timings)})`);
  }

  /** A test that, when it fails, prints the last output of the server and Inspector behind it. */
  function inspectorTest(name: string, body: (t: TestContext) => Promise<void>): void {
    test(name, async (t) => {
      try {
        await body(t);
      } catch (error) {
        process.stderr.write(`\n--- server:\n${server?.output().slice(-3000)}\n--- inspector:\n${inspector?.output().slice(-3000)}\n`);
        throw error;
      }
    });
  }

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    shellEnv = { BACKCHANNEL_HOME: dataDir };
    // Side by side, each kept as it starts, so that `after` stops the ones that did when another did not.
    const started = await Promise.allSettled([
      startInspector().then((host) => (inspector = host)),
      startServer(dataDir, "mcp-proxy").then((running) => (server = running)),
      connectServer(dataDir).then((client) => (agent = client)),
    ]);
    for (const result of started) if (result.status === "rejected") throw result.reason;
    recipe = await AppRecipe.read(agent);
  });

  after(async () => {
    for (const app of apps) app.stop();
    await shown?.close();
    await agent?.close();
    await server?.stop();
    await inspector?.close();
    await cleanup?.();
  });

  let pollChannel = "";

  inspectorTest("the poll: the agent asks, the user votes, the watcher wakes the agent, its tally shows; five rounds", async (t) => {
    const { app, opened } = await open(recipe.openCall("poll_html"));
    pollChannel = app.channelId;
    const timings: RoundTrips = { woken: [], shown: [] };
    const choices = ["Wednesday", "Monday", "Friday"];
    const vote = await runPoll(recipe, app, opened.frame, choices[0]!, timings);
    assert.deepEqual(vote.data, { option: "Wednesday" });
    for (let round = 1; round < ROUNDS; round++) await pollRound(recipe, app, opened.frame, choices[round % choices.length]!, timings);
    assert.equal(await opened.frame.locator("#title").textContent(), "Quick poll");
    assert.equal(await opened.frame.locator("#presence").textContent(), "Connected");
    assert.equal(await opened.frame.locator("#notice").isHidden(), true, "no error");
    report(t, "poll", timings);
  });

  inspectorTest("the sortable list: the user drags and clicks into order, the agent reads each order, its reply shows; five rounds", async (t) => {
    const { app, opened } = await open(recipe.openCall("list_html"));
    const timings: RoundTrips = { woken: [], shown: [] };
    await sortList(recipe, app, opened.frame, timings);
    // The user changes their mind: one item up, send again (each order differs in its top two, so each reply does).
    const moves: [string, string[]][] = [
      ["Dark mode", ["Offline sync", "Dark mode", "Export to PDF"]],
      ["Dark mode", ["Dark mode", "Offline sync", "Export to PDF"]],
      ["Export to PDF", ["Dark mode", "Export to PDF", "Offline sync"]],
      ["Export to PDF", ["Export to PDF", "Dark mode", "Offline sync"]],
    ];
    for (const [item, order] of moves.slice(0, ROUNDS - 1)) {
      await opened.frame.getByRole("button", { name: `Move ${item} up` }).click();
      await sendOrder(app, opened.frame, order, timings);
    }
    report(t, "sortable list", timings);
  });

  inspectorTest("a saved app opens again with open_app {name} on a fresh channel and works", async () => {
    const save = await savePoll(agent, recipe, pollChannel);
    const { app, opened } = await open(recipe.call("open_app", "", { name: "quick-poll" }));
    assert.notEqual(app.channelId, pollChannel);
    assert.equal(app.opened.description, save.description, "the note comes back to the agent");
    await runPoll(recipe, app, opened.frame, "Friday", { woken: [], shown: [] });
    assert.equal(await opened.frame.locator("#title").textContent(), "Quick poll");
  });

  inspectorTest("markup in channel data stays text, and runs nothing", async () => {
    const { app, opened } = await open(recipe.openCall("poll_html"));
    await checkMarkupStaysText(app, opened.frame);
    assert.deepEqual(inspector.pageErrors(), [], "nothing failed in Inspector's page or the apps so far");
  });

  inspectorTest("a fragment whose scripts fail: the user sees it, the agent gets app_error with the fragment's line, the rest runs", async () => {
    const { app, opened } = await open({ title: "Broken", html: BROKEN_APP });
    await checkBrokenApp(agent, app, opened.frame);
  });
});
