/**
 * The Claude Code journey with the plugin, for an app the agent writes: the real Claude
 * Code (the pinned version, see test/support/claude-code/) loaded with `--plugin-dir
 * <checkout>/plugin` and nothing else configured, a scripted model that follows
 * backchannel's instructions as Claude Code shows them (test/support/claude-code/
 * app-policy.ts: it reads the custom-apps recipe, opens its sortable list with
 * `open_app`, gives the person the link the result names, arms nothing, and replies to
 * each wake with the recipe's `notify_ui` calls), and a person in Chromium who opens that
 * link in the browser host (web/) and uses the app.
 *
 * The app's `ready` wakes the model, which sends the items; then the person sends their
 * order, three times with other orders, and each time reads the model's note in the app,
 * answered within two model requests; after a reload the app asks for its items again
 * and works as before.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Frame } from "playwright-core";
import { appFrame } from "./support/browser-host.js";
import { notedText, pluginAppPolicy } from "./support/claude-code/app-policy.js";
import { type BrowserTabRig, startBrowserTabRig } from "./support/claude-code/browser-rig.js";
import { claudeCodeSkipReason } from "./support/claude-code/install.js";
import { openFromReply, pluginTool as tool, waitForWatcher } from "./support/claude-code/plugin-policy.js";
import { clickedAt, listOrder, shownAt, stampClicks, watchFor } from "./support/example-apps.js";
import { browserSkipReason } from "./support/helpers.js";

const skip = claudeCodeSkipReason() ?? browserSkipReason();

const PROMPT = "Make me a small app to rank the features of our next release.";
/** The items the custom-apps recipe's list starts with, in its order. */
const ITEMS = ["Dark mode", "Offline sync", "Export to PDF"];

describe("Claude Code with the plugin: the person uses an app the agent wrote, in a browser tab", { skip, timeout: 600_000 }, () => {
  const journey = pluginAppPolicy(PROMPT);
  let rig: BrowserTabRig;

  before(async () => {
    rig = await startBrowserTabRig(journey.policy);
  });

  after(async () => {
    await rig?.close();
  });

  test("the reply carries the app's link; the app's ready and three orders answered in the tab, ≤ 2 model requests each; a reload keeps it working", async (t) => {
    const { dataDir, model, session, browser } = rig;
    const link = await openFromReply(session, model, PROMPT, "open_app");
    const opened = model.turns().find((turn) => turn.result(tool("open_app")) !== undefined)!;
    assert.match(opened.result(tool("open_app"))!.text, /"app_url":"http:\/\/127\.0\.0\.1:\d+\//, "open_app names the browser host's link");
    assert.match(opened.result(tool("open_app"))!.text, /Arm nothing/, "the result tells the model of the wake hook, and the model arms nothing");
    assert.ok(
      link.endsWith(`#${/"channel_id":"([^"]+)"/.exec(opened.result(tool("open_app"))!.text)![1]}`),
      `the link shows the app's channel: ${link}`,
    );
    const page = await (await browser.newContext()).newPage();

    /**
     * Resolves once the turn that began after `before` model requests has sent the app its
     * reply (the wake hook gave the model that turn), and says how many requests it took:
     * at most two.
     */
    const answered = async (what: string, before: number, shown = "") => {
      await model.waitForTurn((turn) => turn.result(tool("notify_ui")) !== undefined, { from: before, timeoutMs: 120_000 });
      const requests = model.turns().length - before;
      t.diagnostic(`${what}: ${shown}${requests} model requests`);
      assert.ok(requests <= 2, `${what} took ${requests} model requests`);
    };

    /** The app's load: its ready wakes the model, which sends the recipe's items. */
    const load = async (loading: () => Promise<unknown>) => {
      // The hook listens again once the last turn ended.
      await waitForWatcher(dataDir);
      const before = model.turns().length;
      await loading();
      const frame = await appFrame(page, "#done");
      assert.equal(await frame.locator("#title").textContent(), "Rank the features", "the shell shows the app the model opened");
      await frame
        .locator("#items li")
        .nth(ITEMS.length - 1)
        .waitFor({ timeout: 120_000 });
      assert.deepEqual(await listOrder(frame), ITEMS, "the items the model sent on ready");
      await answered("the app's ready → its items", before);
      await stampClicks(frame);
      return frame;
    };

    /**
     * The person moves `item` up `steps` times, sees `expected`, and sends the order; the
     * wake hook gives the model a turn, and its note naming the top two shows in the app.
     * Times the click → the note on screen by the page's clock.
     */
    const order = async (frame: Frame, item: string, steps: number, expected: string[]) => {
      for (let step = 0; step < steps; step += 1) await frame.getByRole("button", { name: `Move ${item} up` }).click();
      assert.deepEqual(await listOrder(frame), expected, "the order on screen");
      await waitForWatcher(dataDir);
      const before = model.turns().length;
      await watchFor(frame, "#reply", notedText(expected));
      await frame.getByRole("button", { name: "Send my order" }).click();
      const shownAtMs = await shownAt(frame, "#reply", notedText(expected));
      await answered(`order ${expected.join(" > ")}`, before, `shown ${shownAtMs - (await clickedAt(frame))} ms after the click, `);
      assert.equal(await frame.getByRole("button", { name: "Send my order" }).isEnabled(), true, "the app is ready for the next order");
    };

    let frame = await load(() => page.goto(link));
    await order(frame, "Export to PDF", 2, ["Export to PDF", "Dark mode", "Offline sync"]);
    await order(frame, "Offline sync", 1, ["Export to PDF", "Offline sync", "Dark mode"]);
    await order(frame, "Dark mode", 2, ["Dark mode", "Export to PDF", "Offline sync"]);

    frame = await load(() => page.reload());
    await order(frame, "Offline sync", 1, ["Offline sync", "Dark mode", "Export to PDF"]);

    const orders = journey.woken.filter((message) => message.event === "order");
    assert.deepEqual(
      orders.map((message) => message.data.items),
      [
        ["Export to PDF", "Dark mode", "Offline sync"],
        ["Export to PDF", "Offline sync", "Dark mode"],
        ["Dark mode", "Export to PDF", "Offline sync"],
        ["Offline sync", "Dark mode", "Export to PDF"],
      ],
      "each order reached the model once, through the wake hook",
    );
    assert.equal(journey.woken.filter((message) => message.event === "ready").length, 2, "one ready per load");
    assert.deepEqual(model.errors, []);
  });
});
