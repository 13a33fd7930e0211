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
import { AgentApp, AppRecipe, type HostCall } from "./support/app-agent.js";
import {
  BROKEN_APP,
  checkBrokenApp,
  checkMarkupStaysText,
  type RoundTrips,
  runPoll,
  savePoll,
  sortList,
  stampClicks,
} from "./support/example-apps.js";
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
import { median } from "./support/reader-page.js";

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
  const consoleLines: string[] = [];
  const timings: RoundTrips = { woken: [], shown: [] };

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
    // Kept for the report of a failure: what the host and its apps said went wrong.
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") consoleLines.push(`${message.type()}: ${message.text()}`);
    });
    page.on("dialog", (dialog) => {
      pageErrors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(playground.page("/?agent=off"));
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
      await stampClicks(frame);
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
    // For an app that never said "ready": the step its shell stopped at (a notice, or no title yet).
    for (const context of contexts)
      for (const frame of context.pages().flatMap((page) => page.frames())) {
        const shown = await frame
          .evaluate(() => ({
            // Only the app shell's frames have #app (the reader's do not).
            title: document.getElementById("app") ? (document.getElementById("title")?.textContent ?? "") : null,
            notice: document.getElementById("notice")?.textContent ?? "",
            presence: document.getElementById("presence")?.textContent ?? "",
          }))
          .catch(() => null);
        if (shown && shown.title !== null && (shown.notice !== "" || shown.title === "App"))
          process.stderr.write(`\nan app's shell showed: ${JSON.stringify(shown)}\n`);
      }
    for (const context of contexts) await context.close();
    await browser?.close();
    await agent?.close();
    await playground?.stop();
    await cleanup?.();
    if (consoleLines.length > 0) process.stderr.write(`\nthe host pages' console errors and warnings:\n${consoleLines.join("\n")}\n`);
    if (timings.woken.length > 0) {
      const show = (values: number[]) => `${values.join(", ")} ms (median ${median(values)} ms)`;
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
    const vote = await runPoll(recipe, app, frame, "Wednesday", timings);
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
      // Through the CSSOM: the page's content security policy refuses a style element.
      await page.evaluate(() => {
        Object.assign(document.getElementById("host")!.style, {
          display: "grid",
          gridTemplateColumns: "1fr 1fr",
          gap: "0 16px",
          alignItems: "start",
        });
        for (const app of document.querySelectorAll<HTMLElement>("#host > .tool-app"))
          Object.assign(app.style, { gridColumn: "2", gridRow: "1 / span 2", margin: "0" });
      });
      await page.evaluate(() => window.scrollTo(0, 0));
      await frame.locator("#note").waitFor();
      const box = (await page.locator("#host").boundingBox())!;
      await page.screenshot({ path: process.env.BACKCHANNEL_APPS_SCREENSHOT, clip: { x: box.x, y: box.y, width: box.width, height: 520 } });
    }
  });

  test("markup in channel data stays text in the example apps, and runs nothing", async () => {
    const { app, frame } = await (await openHost()).open(recipe.openCall("poll_html"));
    await checkMarkupStaysText(app, frame);
  });

  test("the sortable list: the user drags and clicks into order, the agent reads the order, its reply shows", async () => {
    const { app, frame } = await (await openHost()).open(recipe.openCall("list_html"));
    await sortList(recipe, app, frame, timings);
  });

  test("a saved app opens again on a fresh channel and works", async () => {
    const save = await savePoll(agent, recipe, pollChannel);

    const { app, frame } = await (await openHost()).open(recipe.call("open_app", "", { name: "quick-poll" }));
    assert.notEqual(app.channelId, pollChannel);
    assert.equal(app.opened.description, save.description, "the note comes back to the agent");
    await runPoll(recipe, app, frame, "Friday", timings);
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
    await runPoll(recipe, app, await host.appFrame(0), "Monday", timings);
  });

  test("a fragment whose scripts fail: the user sees it, the agent gets app_error with the fragment's line, the rest runs", async () => {
    const { app, frame } = await (await openHost({ appErrors: true })).open({ title: "Broken", html: BROKEN_APP });
    await checkBrokenApp(agent, app, frame);
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
