/// <reference lib="dom" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * The custom-apps recipe's example apps (the poll and the sortable list), an app that
 * fails on purpose, and markup sent as data, driven end to end in any MCP Apps host:
 * the user acts in the app's frame (Playwright), the scripted agent (app-agent.ts) is
 * woken by the watcher, reads, and replies. Shared by the playground's and Inspector's
 * suites; each host's suite only opens the apps.
 *
 * Round trips are timed with `Date.now()` on both sides (one machine, one clock): the
 * page stamps each click in the capture phase, before the app's handlers
 * ({@link stampClicks}), and the moment a reply's text shows ({@link watchFor}).
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";
import type { Frame } from "playwright-core";
import type { AgentApp, AgentMessage, AppRecipe } from "./app-agent.js";
import { structured } from "./helpers.js";

/** Markup that runs code if it ever reaches the DOM as markup: the image fails to load (the CSP allows no image), so onerror fires. */
export const XSS = `<img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script><b>bold?</b>`;

/**
 * An app that fails in every way the shell reports: a runtime error while its scripts
 * run (line 9), a script it cannot load (no network), a syntax error (line 14), and,
 * later, an error in one of its channel handlers (line 4). Line numbers are the fragment's.
 */
export const BROKEN_APP = `<p id="status">A broken app</p>
<script>
  backchannel.on("go", () => {
    missingFunction();
  });
</script>
<script>
  const half = 1;
  null.boom;
</script>
<script src="https://cdn.example.com/lib.js"></script>
<script>
  document.getElementById("status").textContent = "This never runs";
  let broken = ;
</script>
<script>
  document.getElementById("status").textContent = "Still running after the errors";
</script>`;

/** Per round trip, in ms: the user's click → the agent has the message (the watcher woke it, it polled); its reply sent → on screen. */
export interface RoundTrips {
  woken: number[];
  shown: number[];
}

/** Makes `frame`'s document stamp every click (capture phase, before the app's handlers) for {@link clickedAt}. Call once per document. */
export async function stampClicks(frame: Frame): Promise<void> {
  await frame.evaluate(() =>
    document.addEventListener("click", () => ((window as unknown as { __clickedAt: number }).__clickedAt = Date.now()), { capture: true }),
  );
}

/** When the last click reached `frame`'s document, by the page's clock (see {@link stampClicks}). */
export async function clickedAt(frame: Frame): Promise<number> {
  return frame.evaluate(() => (window as unknown as { __clickedAt: number }).__clickedAt);
}

/** Makes the page stamp the moment `selector` in `frame` first shows `text` (call it before the action that leads there). */
export async function watchFor(frame: Frame, selector: string, text: string): Promise<void> {
  await frame.evaluate(
    ({ selector, text }) => {
      const stamps = window as unknown as { __shown?: Record<string, number> };
      stamps.__shown ??= {};
      const key = `${selector}\n${text}`;
      delete stamps.__shown[key];
      const observer = new MutationObserver(() => {
        if (document.querySelector(selector)?.textContent?.includes(text)) {
          stamps.__shown![key] = Date.now();
          observer.disconnect();
        }
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    },
    { selector, text },
  );
}

/** Waits until `selector` in `frame` shows `text`; resolves with the page's stamp of that moment (see {@link watchFor}). */
export async function shownAt(frame: Frame, selector: string, text: string): Promise<number> {
  await frame.locator(selector, { hasText: text }).waitFor();
  return frame.evaluate(
    ({ selector, text }) => (window as unknown as { __shown?: Record<string, number> }).__shown?.[`${selector}\n${text}`] ?? Date.now(),
    { selector, text },
  );
}

/** The poll example, from the shell's `ready` to the agent's tally on screen (see {@link pollRound}); returns the vote the agent read. */
export async function runPoll(recipe: AppRecipe, app: AgentApp, frame: Frame, choice: string, timings: RoundTrips): Promise<AgentMessage> {
  await app.until("ready");
  return pollRound(recipe, app, frame, choice, timings);
}

/**
 * One round of the poll: the agent asks the recipe's question (again: the app shows
 * fresh buttons), the user votes `choice`, the watcher wakes the agent, which tallies
 * what it read and says `<choice> it is`; the tally shows. Returns the vote. Pushes
 * one figure to each of `timings`. Give consecutive rounds different choices: a round
 * waits for its own note.
 */
export async function pollRound(recipe: AppRecipe, app: AgentApp, frame: Frame, choice: string, timings: RoundTrips): Promise<AgentMessage> {
  const poll = recipe.reply(app.channelId, "poll").data as { question: string; options: string[] };
  await app.reply("poll");
  // Enabled: the buttons of an earlier round are disabled once voted.
  const button = frame.locator("button.option:enabled", { hasText: choice });
  await button.waitFor();
  assert.equal(await frame.locator("#question").textContent(), poll.question);
  assert.deepEqual(await frame.locator("button.option > span:nth-child(2)").allTextContents(), poll.options);

  const note = `${choice} it is: one vote so far.`;
  await watchFor(frame, "#note", note);
  await app.armed();
  await button.click();
  const vote = await app.until("vote");
  const repliedAt = Date.now();
  timings.woken.push(repliedAt - (await clickedAt(frame)));
  // The agent tallies what it read, as the recipe says: every option's count.
  const counts = Object.fromEntries(poll.options.map((option) => [option, option === vote.data.option ? 1 : 0]));
  await app.reply("tally", { counts, note });
  timings.shown.push((await shownAt(frame, "#note", note)) - repliedAt);
  assert.equal(await frame.locator("button.option.chosen .count").textContent(), "1");
  assert.deepEqual(
    await frame.locator("button.option:not(.chosen) .count").allTextContents(),
    poll.options.filter((option) => option !== choice).map(() => "0"),
  );
  return vote;
}

/**
 * The list example from the shell's `ready`: the agent sends the recipe's items, the
 * user drags "Export to PDF" to the top and moves "Offline sync" up twice with its
 * arrow, then sends the order (see {@link sendOrder}).
 */
export async function sortList(recipe: AppRecipe, app: AgentApp, frame: Frame, timings: RoundTrips): Promise<void> {
  await app.until("ready");
  const { items } = recipe.reply(app.channelId, "items").data as { items: string[] };
  assert.deepEqual(items, ["Dark mode", "Offline sync", "Export to PDF"], "the recipe's items, which this test orders");
  await app.reply("items");
  const rows = frame.locator("#items li");
  await rows.nth(2).waitFor();
  // A user drags a list they see, once it has stopped moving. Once the items are in, the
  // host grows the frame to the new height (some 100 ms later), and a drag begun before
  // that, in a frame that still scrolls, lands on nothing. An app below the fold is not
  // resized until it is in view: Chromium runs no animation frames (so no
  // ResizeObserver, which ext-apps' auto-resize uses) in an off-screen cross-origin
  // frame (nor does Playwright's check that an element is stable). Within 2 px: the
  // playground's iframe borders.
  const frameElement = await frame.frameElement();
  await frameElement.scrollIntoViewIfNeeded();
  await frameElement.dispose();
  await frame.waitForFunction(() => Math.abs(window.innerHeight - document.documentElement.scrollHeight) <= 2);
  // Drag "Export to PDF" onto the top half of "Dark mode" (before it), then move "Offline sync" up twice with its arrow.
  await rows.nth(2).dragTo(rows.nth(0), { targetPosition: { x: 20, y: 4 } });
  assert.deepEqual(await listOrder(frame), ["Export to PDF", "Dark mode", "Offline sync"]);
  await frame.getByRole("button", { name: "Move Offline sync up" }).click();
  await frame.getByRole("button", { name: "Move Offline sync up" }).click();
  await sendOrder(app, frame, ["Offline sync", "Export to PDF", "Dark mode"], timings);
}

/**
 * The user sends the list's order; the watcher wakes the agent, which reads it (it must
 * be `expected`) and replies with its top two ("Got it: A first, then B."); the reply
 * shows and the button is enabled again. Pushes one figure to each of `timings`.
 */
export async function sendOrder(app: AgentApp, frame: Frame, expected: string[], timings: RoundTrips): Promise<void> {
  const say = (ranked: string[]) => `Got it: ${ranked[0]} first, then ${ranked[1]}.`;
  assert.deepEqual(await listOrder(frame), expected, "the order on screen");
  await watchFor(frame, "#reply", say(expected));
  await app.armed();
  await frame.getByRole("button", { name: "Send my order" }).click();
  const order = await app.until("order");
  const repliedAt = Date.now();
  timings.woken.push(repliedAt - (await clickedAt(frame)));
  assert.deepEqual(order.data, { items: expected });
  await app.reply("noted", { text: say(order.data.items as string[]) });
  timings.shown.push((await shownAt(frame, "#reply", say(expected))) - repliedAt);
  assert.equal(await frame.getByRole("button", { name: "Send my order" }).isEnabled(), true);
}

/** The list's items as shown, top first. */
export function listOrder(frame: Frame): Promise<string[]> {
  return frame.locator("#items li").evaluateAll((elements) => elements.map((element) => (element as HTMLElement).dataset.item ?? ""));
}

/**
 * The poll, opened in `frame`, gets {@link XSS} in its question, options and note: each
 * shows as text, no element is made from it, and nothing of it runs.
 */
export async function checkMarkupStaysText(app: AgentApp, frame: Frame): Promise<void> {
  await app.until("ready");
  await app.reply("poll", { question: `Is ${XSS} safe?`, options: [XSS, "Plain"] });
  await frame.locator("button.option", { hasText: "Plain" }).waitFor();
  assert.equal(await frame.locator("#question").textContent(), `Is ${XSS} safe?`);
  assert.equal(await frame.locator("button.option > span:nth-child(2)").first().textContent(), XSS);
  await frame.locator("button.option", { hasText: "Plain" }).click();
  await app.until("vote");
  await app.reply("tally", { counts: { [XSS]: 0, Plain: 1 }, note: XSS });
  await frame.locator("#note", { hasText: "bold?" }).waitFor();
  assert.equal(await frame.locator("#note").textContent(), XSS);
  assert.equal(await frame.locator("#app img, #app b, #app p script").count(), 0, "no element was made from the markup");
  assert.equal(await frame.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined, "no handler or script ran");
}

/**
 * {@link BROKEN_APP}, opened in `frame`: the agent gets an `app_error` per failure with
 * the fragment's line, the user sees a notice, the scripts after the failures run;
 * then an error in a channel handler (the agent sends `go` through `agent`) is
 * reported the same way.
 */
export async function checkBrokenApp(agent: Client, app: AgentApp, frame: Frame): Promise<void> {
  const seen: AgentMessage[] = [];
  await app.until("ready", seen);
  const errors = seen.filter((message) => message.event === "app_error").map((message) => message.data);
  assert.deepEqual(errors, [
    { message: "TypeError: Cannot read properties of null (reading 'boom')", line: 9 },
    {
      message: "the script https://cdn.example.com/lib.js did not load: the host allows no network (CSP); put its code inline in a <script>",
      line: null,
    },
    { message: "SyntaxError: Unexpected token ';'", line: 14 },
  ]);
  assert.equal(await frame.locator("#status").textContent(), "Still running after the errors");
  assert.match((await frame.locator("#notice").textContent()) ?? "", /^The app hit an error/);

  // Later errors too: one in a channel handler.
  structured(await agent.callTool({ name: "notify_ui", arguments: { channel_id: app.channelId, event: "go", data: {} } }));
  const later = await app.until("app_error");
  assert.deepEqual(later.data, { message: "ReferenceError: missingFunction is not defined", line: 4 });
  await frame.locator("#notice", { hasText: "(line 4): ReferenceError: missingFunction is not defined. The agent was told." }).waitFor();
}

/**
 * Saves the poll on `channelId` with the recipe's own `save_app` call, through `agent`,
 * as "quick-poll" (a new name). Returns the call's arguments.
 */
export async function savePoll(agent: Client, recipe: AppRecipe, channelId: string): Promise<Record<string, unknown>> {
  const save = recipe.call("save_app", channelId);
  assert.equal(save.name, "quick-poll", "the recipe's own save_app call");
  const saved = structured<{ name: string; replaced: boolean }>(await agent.callTool({ name: "save_app", arguments: save }));
  assert.deepEqual(saved, { name: "quick-poll", uri: "backchannel://apps/quick-poll", replaced: false });
  return save;
}
