/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * Figure 21: the reader in a browser tab, where a terminal agent's person reads it.
 *
 * - The browser host alone (no third-party host in the way): a server as Claude Code
 *   opens it (no MCP Apps extension) opens the 718 KB manual by path; the link its
 *   result names is opened in a fresh Chromium page each sample: link opened → the
 *   first screen (`reader:first-screen`) and → the whole manual (`reader:document`),
 *   read from the reader frame's marks on the same clock, each counted once the page
 *   also shows the frame at its height (readable, not only in the DOM). Its floor, in turn with it:
 *   the same manual as one static page (rendered as the reader renders it, served by a
 *   bare HTTP server on 127.0.0.1), address opened → its whole DOM in (DOMContentLoaded).
 *   Then asks in that page, answered by an SDK agent: its `notify_ui` → the card shows
 *   the answer.
 * - Claude Code with the plugin (test/support/claude-code/plugin-policy.ts) and the
 *   person in the tab: Enter → the answer on screen, with the model requests each ask
 *   took, beside Claude Code's own floor measured in the same run
 *   (claude-code-floor.ts), read as "floor × 2 requests" (the wake and the end of the turn).
 */
import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type Browser, chromium, type Frame } from "playwright-core";
import { markdown } from "../../app/markdown-pieces.js";
import type { RunContext } from "../figures.js";
import { type SoloFigure, soloFigure as solo } from "../solo.js";
import { readerFrame, stopBrowserHost } from "../../test/support/browser-host.js";
import { claudeCodeSkipReason } from "../../test/support/claude-code/install.js";
import { startModelServer } from "../../test/support/claude-code/model-server.js";
import { PLUGIN_ROOT, pluginPolicy, pluginTool, readerLinkOf, waitForWatcher } from "../../test/support/claude-code/plugin-policy.js";
import { AS_CLAUDE_CODE, startSession } from "../../test/support/claude-code/session.js";
import { browserSkipReason, CHROMIUM_ARGS, CHROMIUM_PATH, connectServer } from "../../test/support/helpers.js";
import { longMarkdown } from "../../test/support/long-document.js";
import { askAbout, askFollowUp, ReaderAgent, watchAnswer } from "../../test/support/reader-driver.js";
import { measureFloor } from "./claude-code-floor.js";

/** How much the suite measures. */
export interface BrowserTabPlan {
  /** Fresh pages opened on the manual's link. */
  loads: number;
  /** Answers timed into their card in the browser host. */
  answers: number;
  /** Asks through Claude Code with the plugin. */
  asks: number;
  /** Floor samples (claude-code-floor.ts). */
  floorSamples: number;
}

/** The manual: 718 KB in about 160 sections, as the other long-document figures. */
const MANUAL_BYTES = 718 * 1024;
const SECTION_PARAGRAPHS = 11;
/** Longest one ask may take before the run fails. */
const ASK_TIMEOUT_MS = 120_000;

/** The browser host's figures, then, with the pinned Claude Code installed, the plugin's beside its floor. */
export async function browserTabFigures(plan: BrowserTabPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const skip = browserSkipReason();
  if (skip) {
    ctx.log(`browser-tab: left out: ${skip}`);
    return [];
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const figures = await hostFigures(browser, plan, ctx);
    const claudeSkip = claudeCodeSkipReason();
    if (claudeSkip) ctx.log(`browser-tab: Claude Code left out: ${claudeSkip}`);
    else figures.push(...(await pluginFigures(browser, plan, ctx)));
    return figures;
  } finally {
    await browser.close();
  }
}

declare global {
  interface Window {
    /** When the page's main app frame was first visible at a height set for it (by the page or the app), on the clock of `Date.now()`. */
    backchannelFrameShownAt?: number;
  }
}

/**
 * Run in the page before its own scripts (Playwright's init script): notes when the main
 * app frame is first visible with a height set for it (by the page or the app), as the
 * page's change that made it so happens. A reader in a hidden frame, or one still at the
 * style sheet's first 200 px, is not yet readable however far its own script got.
 */
function watchFrameShown(): void {
  if (window !== window.top) return;
  const observer = new MutationObserver(() => {
    const iframe = document.querySelector<HTMLIFrameElement>("#frame iframe");
    if (!iframe || iframe.style.height === "" || iframe.style.visibility === "hidden") return;
    window.backchannelFrameShownAt = performance.timeOrigin + performance.now();
    observer.disconnect();
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["style"] });
}

/** The browser host alone: the manual's load after the link is opened, and answer → card. */
async function hostFigures(browser: Browser, plan: BrowserTabPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const dataDir = join(ctx.root, "browser-tab-host");
  const { markdown: text, marker } = longMarkdown(MANUAL_BYTES, SECTION_PARAGRAPHS);
  const path = join(ctx.root, "browser-tab-manual.md");
  await writeFile(path, text);
  const opener = await connectServer(dataDir, {}, AS_CLAUDE_CODE);
  const firstScreen: number[] = [];
  const whole: number[] = [];
  const floor: number[] = [];
  const answerToCard: number[] = [];
  const staticPage = await serveStaticPage(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Manual</title></head><body>${markdown.render(text)}</body></html>`,
  );
  try {
    const opened = await opener.callTool({ name: "open_reader", arguments: { title: "Manual", path } });
    const text = JSON.stringify(opened.structuredContent ?? {});
    const link = readerLinkOf(text);
    if (!link) throw new Error(`open_reader gave no link: ${text.slice(0, 300)}`);
    const channelId = new URL(link).hash.slice(1);
    ctx.log(`browser-tab: the manual, ${plan.loads} loads`);
    for (let index = 0; index < plan.loads; index++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.addInitScript(watchFrameShown);
      const openedAt = Date.now();
      await page.goto(link);
      const frame = await readerFrame(page);
      await frame.waitForFunction(() => performance.getEntriesByName("reader:document").length > 0, undefined, { timeout: 60_000 });
      const marks = await frame.evaluate(() => {
        const at = (name: string) => performance.timeOrigin + performance.getEntriesByName(name)[0]!.startTime;
        return { firstScreen: at("reader:first-screen"), whole: at("reader:document") };
      });
      await page.waitForFunction(() => window.backchannelFrameShownAt !== undefined, undefined, { timeout: 60_000 });
      const shownAt = (await page.evaluate(() => window.backchannelFrameShownAt))!;
      // Readable: in the reader's DOM, and its frame on screen at its height.
      firstScreen.push(Math.max(marks.firstScreen, shownAt) - openedAt);
      whole.push(Math.max(marks.whole, shownAt) - openedAt);
      await page.close();
      floor.push(await staticLoad(browser, staticPage.url));
    }
    ctx.log(`browser-tab: ${plan.answers} answers into their card`);
    const agent = await ReaderAgent.start(dataDir, channelId);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(link);
      const frame = await readerFrame(page);
      await agent.next("ready", 30_000);
      await askAbout(frame, marker, "Question 1?");
      let { ask } = await agent.nextAsk(30_000);
      for (let index = 1; index <= plan.answers; index++) {
        const answer = `Answer ${index} about the manual.`;
        const shown = await watchAnswer(frame, ask.thread_id, answer);
        const sentAt = Date.now();
        await agent.send("answer", { thread_id: ask.thread_id, text: answer });
        answerToCard.push((await shown()) - sentAt);
        if (index === plan.answers) break;
        await askFollowUp(frame, ask.thread_id, `Question ${index + 1}?`);
        ({ ask } = await agent.nextAsk(30_000));
      }
    } finally {
      await page.close();
      await agent.close();
    }
  } finally {
    await opener.close();
    stopBrowserHost({ BACKCHANNEL_HOME: dataDir });
    await staticPage.close();
  }
  const against = { name: "the manual as a static page", samples: floor };
  return [
    solo("browser-tab.manual.floor", "Floor: the 718 KB manual as one static page, address opened → its whole DOM", floor),
    { ...solo("browser-tab.manual.firstScreen", "Browser host: link opened → the 718 KB manual's first screen", firstScreen), against },
    { ...solo("browser-tab.manual.whole", "Browser host: link opened → the 718 KB manual readable (whole)", whole), against },
    solo("browser-tab.answerToCard", "Browser host: notify_ui answer → its card", answerToCard),
  ];
}

/** Claude Code with the plugin, the person in the tab: Enter → answer on screen, beside the floor of the same run. */
async function pluginFigures(browser: Browser, plan: BrowserTabPlan, ctx: RunContext): Promise<SoloFigure[]> {
  ctx.log(`browser-tab: Claude Code's floor, ${plan.floorSamples} turns`);
  const floor = await measureFloor(plan.floorSamples, ctx);
  const dataDir = join(ctx.root, "browser-tab-plugin");
  const model = await startModelServer(pluginPolicy({ markdown: "# Notes\n\nThe queue is the truth.\n\nAn answer clears the ask.\n" }));
  const session = await startSession({ model, dataDir, configure: "none", args: ["--plugin-dir", PLUGIN_ROOT], allowedTools: ["ToolSearch"] });
  const askToScreen: number[] = [];
  const requests: number[] = [];
  try {
    session.send("Open the reader on my notes.");
    const result = await session.waitForEvent((event) => event.type === "result", { timeoutMs: ASK_TIMEOUT_MS });
    const link = /http:\/\/127\.0\.0\.1:\d+\/\S+/.exec(String(result.result ?? ""))?.[0];
    if (!link) throw new Error(`the model's reply carried no link: ${JSON.stringify(result.result)}`);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(link);
    const tab = await readerFrame(page);
    await waitForWatcher(dataDir);
    await stampAgentMessages(tab);
    ctx.log(`browser-tab: ${plan.asks} asks through Claude Code with the plugin`);
    let thread = "";
    for (let index = 1; index <= plan.asks; index++) {
      const before = model.turns().length;
      const question = `Question ${index}?`;
      const enterAt = index === 1 ? await askAbout(tab, "The queue is the truth.", question) : await askFollowUp(tab, thread, question);
      thread ||= (await tab.locator(".card", { has: tab.locator(".message.user", { hasText: question }) }).getAttribute("data-thread"))!;
      const shown = tab.locator(`.card[data-thread="${thread}"] .message.agent`).nth(index - 1);
      await shown.waitFor({ timeout: ASK_TIMEOUT_MS });
      const text = (await shown.textContent()) ?? "";
      askToScreen.push((await tab.evaluate((answer) => (window as unknown as { __shown: Record<string, number> }).__shown[answer]!, text)) - enterAt);
      // The turn that answered ends before the next ask, so that each ask's requests can be counted.
      await model.waitForTurn((turn) => turn.result(pluginTool("notify_ui")) !== undefined, { from: before, timeoutMs: ASK_TIMEOUT_MS });
      requests.push(model.turns().length - before);
      await waitForWatcher(dataDir);
    }
    await page.close();
  } finally {
    await session.stop();
    await model.close();
    stopBrowserHost({ BACKCHANNEL_HOME: dataDir });
  }
  return [
    solo("browser-tab.floor.mcp", "Claude Code floor: request → next, around notify_ui", floor.mcp),
    {
      ...solo("browser-tab.plugin.askToScreen", "Claude Code with the plugin: Enter in the tab → the answer on screen", askToScreen),
      // Scaled, so that the table's ratio of medians is the floor multiple.
      against: { name: "floor × 2 requests", samples: floor.mcp.map((ms) => ms * 2) },
    },
    {
      ...solo("browser-tab.plugin.requests", "Claude Code with the plugin: model requests per ask", requests, "requests"),
      against: { name: "needed: 2" },
    },
  ];
}

/** A bare HTTP server on 127.0.0.1 that answers every request with `html`: the floor's page. */
async function serveStaticPage(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(html),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** `url` opened in a fresh page: ms from the call to its DOMContentLoaded, on the same clock. */
async function staticLoad(browser: Browser, url: string): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    const openedAt = Date.now();
    await page.goto(url);
    const loaded = await page.evaluate(
      () => performance.timeOrigin + (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).domContentLoadedEventStart,
    );
    return loaded - openedAt;
  } finally {
    await page.close();
  }
}

/** Stamps, in the page, the time each agent message's text first shows in a card (`window.__shown[text]`). */
async function stampAgentMessages(frame: Frame): Promise<void> {
  await frame.evaluate(() => {
    const shown: Record<string, number> = {};
    (window as unknown as { __shown: Record<string, number> }).__shown = shown;
    new MutationObserver(() => {
      for (const message of document.querySelectorAll(".card .message.agent")) {
        const text = message.textContent ?? "";
        if (text !== "" && shown[text] === undefined) shown[text] = Date.now();
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}
