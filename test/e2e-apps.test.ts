/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * Agent-written apps end to end, in a real browser: Debian's Chromium (headless) shows
 * the playground, a real MCP Apps host (AppBridge + the SDK's Client over Streamable
 * HTTP to the real server), which renders each app the agent opens in the app shell,
 * in a sandboxed iframe under hosts' CSP. The agent is a scripted one (no model) in
 * this process: it reads the custom-apps recipe, makes its `open_app` calls through the
 * host, as a model's calls go, and everything else through its own `backchannel serve`
 * process on the same data directory; the real watcher (`backchannel watch <id>`, run
 * through the shell) wakes it. The user is Playwright, clicking in the app.
 *
 * Nothing is mocked. Each round trip (the user's click → the watcher wakes the agent →
 * its reply is on screen) is timed with Date.now() in both places (one machine, one clock).
 *
 * Set BACKCHANNEL_APPS_SCREENSHOT=<file.png> to save a picture of an agent-written app
 * beside the reader (docs/apps.png is made this way: `npm run screenshot`).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from "playwright-core";
import { AgentApp, AppRecipe, type AgentMessage, type HostCall } from "./support/app-agent.js";
import {
  browserSkipReason,
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  connectServer,
  startPlayground,
  structured,
  tempDataDir,
  type PlaygroundProcess,
} from "./support/helpers.js";

/** Markup that runs code if it ever reaches the DOM as markup: the image fails to load (the CSP allows no image), so onerror fires. */
const XSS = `<img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script><b>bold?</b>`;

/**
 * An app that fails in every way the shell reports: a runtime error while its scripts
 * run (line 9), a script it cannot load (no network), a syntax error (line 14), and,
 * later, an error in one of its channel handlers (line 4). Line numbers are the fragment's.
 */
const BROKEN_APP = `<p id="status">A broken app</p>
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

const skip = browserSkipReason();

/** The playground's host side as a test drives it: a model's tool calls, and the apps they render. */
interface Host {
  page: Page;
  /** A model's tool call made by the page, which renders the app it names. */
  call: HostCall;
  /** Opens an app through the host, arms its watcher, and returns it with its frame (the newest in the chat). */
  open(args: Record<string, unknown>): Promise<{ app: AgentApp; frame: Frame }>;
  /** The shell's frame in the `index`th app of the chat (a new one after every re-render). */
  appFrame(index: number): Promise<Frame>;
}

describe("agent-written apps in a real browser", { skip, timeout: 300_000 }, () => {
  let dataDir: string;
  let cleanup: () => Promise<void>;
  let playground: PlaygroundProcess;
  let browser: Browser;
  let agent: Client;
  let recipe: AppRecipe;
  let shellEnv: Record<string, string>;
  const contexts: BrowserContext[] = [];
  const apps: AgentApp[] = [];
  const pageErrors: string[] = [];
  /** Per round trip: the user's click → the agent has the message (woken, polled); its reply sent → on screen. */
  const timings: { woken: number[]; shown: number[] } = { woken: [], shown: [] };

  /**
   * A fresh playground page, in a browser context of its own. Each open app holds one
   * long-poll, and a browser keeps at most 6 connections per origin (a profile's), so a
   * page that piled up every test's apps would stall; a chat tab of a host has its own.
   */
  async function openHost(options: { appErrors?: boolean } = {}): Promise<Host> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    // Playwright reports the errors of the app frames too: a page whose app fails on purpose leaves them out.
    if (!options.appErrors) page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("dialog", (dialog) => {
      pageErrors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(new URL("/?agent=off", playground.url).href);
    await page.waitForFunction(() => "playground" in window);
    const call: HostCall = (name, args) =>
      page.evaluate(({ name, args }) => (window as unknown as { playground: { callTool: HostCall } }).playground.callTool(name, args), {
        name,
        args,
      });
    const appFrame = async (index: number) => {
      const handle = await page.locator(".app-frame iframe").nth(index).elementHandle();
      const frame = await handle?.contentFrame();
      if (!frame) throw new Error(`the playground shows no app iframe #${index}`);
      await frame.locator("#app").waitFor({ state: "attached" });
      await frame.evaluate(() =>
        document.addEventListener("click", () => ((window as unknown as { __clickedAt: number }).__clickedAt = Date.now()), { capture: true }),
      );
      return frame;
    };
    return {
      page,
      call,
      appFrame,
      async open(args) {
        const count = await page.locator(".app-frame").count();
        const app = await AgentApp.open(agent, recipe, call, args, shellEnv);
        apps.push(app);
        return { app, frame: await appFrame(count) };
      },
    };
  }

  /** Makes the page stamp the moment `selector` in `frame` first shows `text` (call it before the action that leads there). */
  async function watchFor(frame: Frame, selector: string, text: string): Promise<void> {
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

  /** When the last click reached `frame`'s document, by the page's clock (stamped in the capture phase, before the app's handlers). */
  async function clickedAt(frame: Frame): Promise<number> {
    return frame.evaluate(() => (window as unknown as { __clickedAt: number }).__clickedAt);
  }

  /** Waits until `selector` in `frame` shows `text`; resolves with the page's stamp of that moment (see {@link watchFor}). */
  async function shownAt(frame: Frame, selector: string, text: string): Promise<number> {
    await frame.locator(selector, { hasText: text }).waitFor();
    return frame.evaluate(
      ({ selector, text }) => (window as unknown as { __shown?: Record<string, number> }).__shown?.[`${selector}\n${text}`] ?? Date.now(),
      { selector, text },
    );
  }

  /** The poll example, from the shell's `ready` to the agent's tally on screen; returns the vote the agent read. */
  async function runPoll(app: AgentApp, frame: Frame, choice: string): Promise<AgentMessage> {
    await app.until("ready");
    const poll = recipe.reply(app.channelId, "poll").data as { question: string; options: string[] };
    await app.reply("poll");
    await frame.locator("button.option", { hasText: choice }).waitFor();
    assert.equal(await frame.locator("#question").textContent(), poll.question);
    assert.deepEqual(await frame.locator("button.option > span:nth-child(2)").allTextContents(), poll.options);

    const note = `${choice} it is: one vote so far.`;
    await watchFor(frame, "#note", note);
    await app.armed();
    await frame.locator("button.option", { hasText: choice }).click();
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

  before(async () => {
    ({ dir: dataDir, cleanup } = await tempDataDir());
    shellEnv = { BACKCHANNEL_HOME: dataDir };
    playground = await startPlayground(dataDir);
    agent = await connectServer(dataDir);
    recipe = await AppRecipe.read(agent);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    for (const app of apps) app.stop();
    for (const context of contexts) await context.close();
    await browser?.close();
    await agent?.close();
    await playground?.stop();
    await cleanup?.();
    if (timings.woken.length > 0) {
      const show = (values: number[]) => `${values.join(", ")} ms (median ${[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]} ms)`;
      process.stderr.write(
        `\napps e2e timings: click → the watcher woke the agent and it polled the message: ${show(timings.woken)}; ` +
          `its reply sent → on screen: ${show(timings.shown)}\n`,
      );
    }
  });

  let pollChannel = "";

  test("the poll: the shell says ready, the agent asks, the user votes, the watcher wakes the agent, its tally shows", async () => {
    const host = await openHost();
    const { app, frame } = await host.open(recipe.openCall("poll_html"));
    pollChannel = app.channelId;
    const vote = await runPoll(app, frame, "Wednesday");
    assert.equal(await frame.locator("#title").textContent(), "Quick poll");
    assert.deepEqual(vote.data, { option: "Wednesday" });
    assert.equal(await frame.locator("#presence").textContent(), "Connected");
    assert.equal(await frame.locator("#notice").isHidden(), true, "no error");
    // Sized to its content: the host made the iframe (200 px until told) as tall as the
    // shell's page, give or take the playground iframe's 1 px borders (box-sizing: border-box).
    const sizes = await frame.evaluate(() => ({ inner: window.innerHeight, content: document.documentElement.scrollHeight }));
    assert.ok(sizes.content > 200 && Math.abs(sizes.inner - sizes.content) <= 2, JSON.stringify(sizes));

    if (process.env.BACKCHANNEL_APPS_SCREENSHOT) {
      // The reader and the app side by side, as two apps of one chat: the playground's
      // chat column laid out in two columns for the picture, clipped to their tops. A
      // clip of the viewport (see e2e-reader.test.ts: full-page shots re-lay out iframes).
      const { page } = host;
      await page.addStyleTag({
        content:
          "#host { display: grid; grid-template-columns: 1fr 1fr; gap: 0 16px; align-items: start } #host > .tool-app { grid-column: 2; grid-row: 1 / span 2; margin: 0 }",
      });
      await page.evaluate(() => window.scrollTo(0, 0));
      await frame.locator("#note").waitFor();
      const box = (await page.locator("#host").boundingBox())!;
      await page.screenshot({ path: process.env.BACKCHANNEL_APPS_SCREENSHOT, clip: { x: box.x, y: box.y, width: box.width, height: 520 } });
    }
  });

  test("markup in channel data stays text in the example apps, and runs nothing", async () => {
    const { app, frame } = await (await openHost()).open(recipe.openCall("poll_html"));
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
  });

  test("the sortable list: the user drags and clicks into order, the agent reads the order, its reply shows", async () => {
    const { app, frame } = await (await openHost()).open(recipe.openCall("list_html"));
    await app.until("ready");
    const { items } = recipe.reply(app.channelId, "items").data as { items: string[] };
    assert.deepEqual(items, ["Dark mode", "Offline sync", "Export to PDF"], "the recipe's items, which this test orders");
    await app.reply("items");
    const rows = frame.locator("#items li");
    await rows.nth(2).waitFor();
    // Drag "Export to PDF" onto the top half of "Dark mode" (before it), then move "Offline sync" up twice with its arrow.
    await rows.nth(2).dragTo(rows.nth(0), { targetPosition: { x: 20, y: 4 } });
    assert.deepEqual(await rows.evaluateAll((elements) => elements.map((element) => (element as HTMLElement).dataset.item)), [
      "Export to PDF",
      "Dark mode",
      "Offline sync",
    ]);
    await frame.getByRole("button", { name: "Move Offline sync up" }).click();
    await frame.getByRole("button", { name: "Move Offline sync up" }).click();

    const text = "Got it: Offline sync first, then Export to PDF.";
    await watchFor(frame, "#reply", text);
    await app.armed();
    await frame.getByRole("button", { name: "Send my order" }).click();
    const order = await app.until("order");
    const repliedAt = Date.now();
    timings.woken.push(repliedAt - (await clickedAt(frame)));
    assert.deepEqual(order.data, { items: ["Offline sync", "Export to PDF", "Dark mode"] });
    const ranked = order.data.items as string[];
    await app.reply("noted", { text: `Got it: ${ranked[0]} first, then ${ranked[1]}.` });
    timings.shown.push((await shownAt(frame, "#reply", text)) - repliedAt);
    assert.equal(await frame.getByRole("button", { name: "Send my order" }).isEnabled(), true);
  });

  test("a saved app opens again on a fresh channel and works", async () => {
    const save = recipe.call("save_app", pollChannel);
    assert.equal(save.name, "quick-poll", "the recipe's own save_app call");
    const saved = structured<{ name: string; replaced: boolean }>(await agent.callTool({ name: "save_app", arguments: save }));
    assert.deepEqual(saved, { name: "quick-poll", uri: "backchannel://apps/quick-poll", replaced: false });

    const { app, frame } = await (await openHost()).open(recipe.call("open_app", "", { name: "quick-poll" }));
    assert.notEqual(app.channelId, pollChannel);
    assert.equal(app.opened.description, save.description, "the note comes back to the agent");
    await runPoll(app, frame, "Friday");
    assert.equal(await frame.locator("#title").textContent(), "Quick poll");
  });

  test("open_app with neither html nor name shows the saved apps, as text", async () => {
    const host = await openHost();
    const listed = structured<{ apps: { name: string }[] }>(await host.call("open_app", {}));
    assert.deepEqual(
      listed.apps.map((saved) => saved.name),
      ["quick-poll"],
    );
    const frame = await host.appFrame(0);
    await frame.locator(".saved-apps li", { hasText: "quick-poll" }).waitFor();
    assert.equal(await frame.locator("#title").textContent(), "Saved apps");
    assert.match((await frame.locator(".saved-apps li").textContent()) ?? "", /A one-question poll\./);
  });

  test("a re-render (the host reloads the iframe) fetches the app again; it says ready and works", async () => {
    const host = await openHost();
    const { app } = await host.open(recipe.openCall("poll_html"));
    await app.until("ready");
    const old = await host.page.locator(".app-frame iframe").elementHandle();
    await host.page.locator(".tool-app").getByRole("button", { name: "Re-render" }).click();
    await host.page.waitForFunction((element) => !element?.isConnected, old);
    await runPoll(app, await host.appFrame(0), "Monday");
  });

  test("a fragment whose scripts fail: the user sees it, the agent gets app_error with the fragment's line, the rest runs", async () => {
    const { app, frame } = await (await openHost({ appErrors: true })).open({ title: "Broken", html: BROKEN_APP });
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
  });

  test("a host theme change recolours the shell and the app", async () => {
    const host = await openHost();
    const { app, frame } = await host.open(recipe.openCall("poll_html"));
    await app.until("ready");
    await app.reply("poll");
    await frame.locator("button.option").first().waitFor();
    const colours = () =>
      frame.evaluate(() => [
        getComputedStyle(document.body).backgroundColor,
        getComputedStyle(document.querySelector("button.option")!).borderTopColor,
      ]);
    assert.deepEqual(await colours(), ["rgb(255, 255, 255)", "rgb(222, 222, 227)"], "the light palette the host sent");
    await host.page.locator("#theme").click();
    await frame.waitForFunction(() => getComputedStyle(document.body).backgroundColor !== "rgb(255, 255, 255)");
    assert.deepEqual(await colours(), ["rgb(27, 27, 31)", "rgb(52, 52, 59)"], "the dark palette the host sent");
  });

  test("nothing failed in the host pages", () => {
    assert.deepEqual(pageErrors, []);
  });
});
