/**
 * The docs' pictures, made from the current build with Debian's Chromium (headless):
 * `npm run docs:shots` builds, then writes docs/shots/<page>-<width>-<theme>.png for each
 * page below, at each size and in each theme. A picture in the docs is one of these
 * files, so a change to a page shows in the next run, never a stale one.
 *
 * One scene serves every page: a channel holding the playground's sample document, a
 * thread answered, a thread whose long answer its compact card cuts short, and a
 * question that waits. It is made the way a person and an agent make it (a selection, the
 * Ask button, a question typed; the agent's answers through `notify_ui` from its own
 * server process). Each page then opens that channel afresh, as a re-opened conversation
 * does; the agent greets the new reader and says what it is doing, and the first card
 * gets the focus, so that it shows whole.
 *
 * The files are PNGs of 256 colours (upng-js): a third of the size of the screenshots,
 * with no difference a reader can see.
 *
 * Adding a page is one entry of PAGES: the path that shows the channel, where the reader
 * is on it, and what part of the page to keep.
 *
 *     npm run docs:shots                    every page
 *     npm run docs:shots -- --only reader   the pages named (one or more --only)
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import UPNG from "upng-js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "docs", "shots");
const SAMPLE = join(ROOT, "web", "page", "sample.md");

/**
 * @typedef {import("playwright-core").Page} Page
 * @typedef {import("playwright-core").Frame} Frame
 * @typedef {object} DocsPage
 * @property {string} name the pictures' file name: docs/shots/<name>-<width>-<theme>.png
 * @property {"playground" | "web"} server which serves it: the playground (`npm start`), or the browser host (`backchannel web`)
 * @property {(channelId: string, theme: Theme) => string} path the path of the page that shows the channel, in the theme
 * @property {(page: Page) => Promise<Frame>} reader the frame the reader runs in
 * @property {string} [clip] a selector of the element to keep (its box), else the whole viewport
 * @typedef {"light" | "dark"} Theme
 */

/** @type {DocsPage[]} */
const PAGES = [
  {
    // The reader alone, clipped to its frame: on the browser host's page, where it has the window's height (in the playground, the chat box takes some).
    name: "reader",
    server: "web",
    path: (channelId, theme) => `/?theme=${theme}#${channelId}`,
    reader: (page) => frameOf(page, "#frame iframe"),
    clip: "#frame iframe",
  },
  {
    // The playground as `npm start` shows it: the reader, the chat box and the agent panel.
    name: "playground",
    server: "playground",
    path: (channelId, theme) => `/?theme=${theme}#${channelId}`,
    reader: (page) => frameOf(page, "#frame iframe"),
  },
  {
    // The browser host (`backchannel web`), where a terminal agent's reader shows: the reader alone in a tab.
    name: "host",
    server: "web",
    path: (channelId, theme) => `/?theme=${theme}#${channelId}`,
    reader: (page) => frameOf(page, "#frame iframe"),
  },
];

/** The sizes of the pictures: a laptop's window, and a phone's. */
const SIZES = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
];

/** @type {Theme[]} */
const THEMES = ["light", "dark"];

/** The agent's status line while the question waits. */
const STATUS = "Reading about the queue, for your question…";

/** Colours in a picture's palette. */
const COLOURS = 256;

/** The answers of the scene's two answered threads. */
const SHORT_ANSWER = "It orders the messages and is **never reused**, so a reader that keeps a cursor never handles one twice.";
const LONG_ANSWER =
  "`backchannel watch <channel_id>`, run as a background command.\n\n" +
  "It only reads the agent's queue and exits the moment a message waits; the host then tells the agent, which reads with `poll_agent_messages` and arms the watcher again.\n\n" +
  "- exit mode: one message, one wake-up\n- follow mode: one line per message";

const { values } = parseArgs({ options: { only: { type: "string", multiple: true }, help: { type: "boolean", short: "h" } } });
if (values.help) {
  process.stdout.write(`Usage: npm run docs:shots [-- --only <page>...]\npages: ${PAGES.map((page) => page.name).join(", ")}\n`);
  process.exit(0);
}
const unknown = (values.only ?? []).filter((name) => !PAGES.some((page) => page.name === name));
if (unknown.length > 0) {
  process.stderr.write(`docs:shots: no page ${unknown.join(", ")}; the pages are ${PAGES.map((page) => page.name).join(", ")}\n`);
  process.exit(1);
}
const chosen = values.only ? PAGES.filter((page) => values.only.includes(page.name)) : PAGES;

// The test support's rig: the playground, an agent's server process and Chromium, on a data directory of their own.
const { browserSkipReason, withKey } = await import(join(ROOT, "dist", "test", "support", "helpers.js"));
const { ReaderPage, ReaderRig } = await import(join(ROOT, "dist", "test", "support", "reader-page.js"));
const { startWeb } = await import(join(ROOT, "dist", "test", "support", "browser-host.js"));
const missing = browserSkipReason();
if (missing) {
  process.stderr.write(`docs:shots: ${missing}\n`);
  process.exit(1);
}

const rig = await new ReaderRig().start();
/** The browser host on the rig's data directory, started when a page needs it. @type {Awaited<ReturnType<typeof startWeb>> | undefined} */
let web;
try {
  const channelId = await makeScene(rig);
  if (chosen.some((docsPage) => docsPage.server === "web")) web = await startWeb({ BACKCHANNEL_HOME: rig.dataDir }, ["--port", "0"]);
  /** The link to `path` on the page's server, with its key (each picture's page is a new browser context, without a session). */
  const link = (/** @type {DocsPage} */ docsPage, /** @type {string} */ path) =>
    docsPage.server === "web" && web ? withKey(path, web.link) : rig.playground.page(path);
  mkdirSync(OUT, { recursive: true });
  for (const docsPage of chosen) {
    for (const size of SIZES) {
      for (const theme of THEMES) {
        const file = join(OUT, `${docsPage.name}-${size.width}-${theme}.png`);
        await shoot(rig, link(docsPage, docsPage.path(channelId, theme)), docsPage, channelId, size, theme, file);
        process.stdout.write(`${relative(ROOT, file)}: ${Math.round(statSync(file).size / 1024)} KiB\n`);
      }
    }
  }
  if (rig.pageErrors.length > 0) throw new Error(`the pages failed: ${rig.pageErrors.join("; ")}`);
} finally {
  await web?.stop();
  await rig.stop();
}

/**
 * Makes the scene on a new channel and returns its id: the sample document, two threads
 * answered by the agent and a question waiting.
 * @param {InstanceType<typeof ReaderRig>} rig
 */
async function makeScene(rig) {
  const channelId = await rig.openDocument(readFileSync(SAMPLE, "utf8"), "How backchannel works");
  const reader = await rig.open({ query: "?agent=off", hash: channelId });
  const answered = [
    { passage: "sequence number", question: "What is a sequence number for?", answer: SHORT_ANSWER },
    { passage: "a small command that exits", question: "Which command is it?", answer: LONG_ANSWER },
  ];
  for (const { passage, question, answer } of answered) {
    await reader.selectAndAsk(passage);
    await reader.submit(question);
    const { message } = await reader.nextMessage("ask");
    await reader.answer(String(message.data.thread_id), answer, answer.slice(0, 12).replaceAll("`", ""));
  }
  await reader.selectAndAsk("The queue stays the truth");
  await reader.submit("Why is the queue the truth, and not the push?");
  await reader.nextMessage("ask");
  await reader.page.close();
  return channelId;
}

/**
 * Opens `docsPage` on the channel at `size` in `theme`, gives the first card the focus,
 * and writes the picture to `file`.
 * @param {InstanceType<typeof ReaderRig>} rig
 * @param {string} url the page's link, its key in it
 * @param {DocsPage} docsPage
 * @param {string} channelId
 * @param {{ width: number, height: number }} size
 * @param {Theme} theme
 * @param {string} file
 */
async function shoot(rig, url, docsPage, channelId, size, theme, file) {
  // What the readers of earlier pictures sent (their `ready`) is read and cleared: a page that plays the agent shows only its own.
  await rig.agent.callTool({ name: "poll_agent_messages", arguments: { channel_id: channelId } });
  const page = await rig.browser.newPage({ viewport: size, colorScheme: theme });
  try {
    page.on("pageerror", (error) => rig.pageErrors.push(error.message));
    await page.goto(url);
    const frame = await docsPage.reader(page);
    // The whole document and its three threads, the waiting one last.
    await frame.waitForFunction(() => document.querySelectorAll(".card").length === 3 && !document.getElementById("doc")?.hasAttribute("aria-busy"));
    // The agent greets the new reader and says what it does (queued: the reader reads them once it receives).
    const agent = new ReaderPage(page, rig.agent, channelId);
    await agent.notify("hello", {});
    await agent.notify("status", { text: STATUS });
    await frame.locator("#presence", { hasText: "Agent is listening" }).waitFor();
    await frame.locator("#status", { hasText: STATUS }).waitFor();
    const first = frame.locator(".card").first();
    await first.locator("textarea").focus();
    // The card grew: it is placed again in the next frame.
    await settled(frame);
    // The first passage and its card at the top, the compact card and the waiting one below them.
    await first.evaluate((card) => {
      const block = document.querySelector("mark.passage")?.closest("[data-block]");
      const scroller = document.getElementById("scroller");
      if (!block || !scroller) return;
      const top = Math.min(card.getBoundingClientRect().top, block.getBoundingClientRect().top);
      scroller.scrollBy(0, top - scroller.getBoundingClientRect().top - 8);
    });
    await frame.locator(".card.idle .message-more").first().waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await settled(frame);
    const clip = docsPage.clip ? await visibleBox(page, docsPage.clip, size) : undefined;
    writeFileSync(file, withPalette(await page.screenshot(clip ? { clip } : {})));
  } finally {
    await page.close();
  }
}

/**
 * Resolves once `frame`'s fonts are in and two frames have been drawn: a layout
 * scheduled for the next frame (cards placed again) has been made.
 * @param {Frame} frame
 */
function settled(frame) {
  return frame.evaluate(() => document.fonts.ready.then(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))));
}

/**
 * The box of `selector` on `page`, scrolled to the top of the viewport and cut to it (a
 * clip of the viewport: an element screenshot would resize the viewport, and an iframe
 * lays its content out again at a passing width).
 * @param {Page} page
 * @param {string} selector
 * @param {{ width: number, height: number }} size
 */
async function visibleBox(page, selector, size) {
  await page.locator(selector).evaluate((element) => element.scrollIntoView({ block: "start" }));
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not on the page`);
  const x = Math.max(0, box.x);
  const y = Math.max(0, box.y);
  return { x, y, width: Math.min(box.width, size.width - x), height: Math.min(box.height, size.height - y) };
}

/**
 * `png` (a screenshot) as a PNG of {@link COLOURS} colours.
 * @param {Buffer} png
 * @returns {Buffer}
 */
function withPalette(png) {
  const image = UPNG.decode(png.buffer.slice(png.byteOffset, png.byteOffset + png.byteLength));
  return Buffer.from(UPNG.encode(UPNG.toRGBA8(image), image.width, image.height, COLOURS));
}

/**
 * The content frame of the iframe `selector` on `page`.
 * @param {Page} page
 * @param {string} selector
 * @returns {Promise<Frame>}
 */
async function frameOf(page, selector) {
  const handle = await page.locator(selector).elementHandle();
  const frame = await handle?.contentFrame();
  if (!frame) throw new Error(`${selector} holds no frame`);
  return frame;
}
