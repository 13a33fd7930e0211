/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Figure 11: the reader on a 1 MiB markdown document, in Chromium through the
 * playground (a real host page: AppBridge, two MCP sessions over Streamable HTTP), with
 * a separate `backchannel serve` process as the agent. For this checkout's reader and,
 * read against it, the reader of an earlier commit (`before`, default 0c4312a, built
 * from `git archive` into a temporary folder and served by the same playground through
 * `--reader-html`, so only the reader differs):
 *
 * - load: the reader iframe's navigation start → its document's first block in the DOM
 *   (the frame's own `performance.now()`, checked every 10 ms);
 * - ask → agent: the Enter key that sends a question (page clock) → the agent's
 *   `poll_agent_messages` returning it (bench clock; one machine, one clock);
 * - answer → screen: just before `notify_ui` → a MutationObserver in the iframe seeing
 *   the answer's text in its card.
 *
 * The two readers are measured in turns, round by round, so that the machine's load
 * falls on both alike. Both pages use the same harness as the browser tests
 * (test/support/reader-page.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { longMarkdown } from "../../test/support/long-document.js";
import { ReaderRig, type ReaderPage } from "../../test/support/reader-page.js";

/** How many samples to take. */
export interface ReaderLongPlan {
  /** Page loads of each reader. */
  loads: number;
  /** Questions asked and answered in each reader. */
  asks: number;
  /** The commit whose reader is "before"; `null` measures this checkout's reader only. */
  beforeCommit: string | null;
}

/** How long one step may take: the reader before spends seconds, on a loaded machine minutes, on each change of a 1 MiB document. */
const SLOW_MS = 300_000;

/** The repository this benchmark runs from (dist/bench/suites/ → the root). */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Measures both readers; without a "before" commit (or git, or the commit), only this checkout's. */
export async function readerLongFigures(plan: ReaderLongPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const { markdown, marker } = longMarkdown();
  const beforeDir = await mkdtemp(join(ctx.root, "reader-before-"));
  let beforeHtml: string | undefined;
  if (plan.beforeCommit === null) ctx.log(`reader, long document: no "before" reader asked for; measuring this checkout only`);
  else {
    ctx.log(`reader, long document: building the reader of ${plan.beforeCommit}`);
    beforeHtml = await buildReaderAt(plan.beforeCommit, beforeDir).catch((error: Error) => {
      ctx.log(`reader, long document: no "before" reader (${error.message.split("\n")[0]}); measuring this checkout only`);
      return undefined;
    });
  }
  const variants = [{ name: "after", html: undefined as string | undefined }, ...(beforeHtml ? [{ name: "before", html: beforeHtml }] : [])];
  const samples = new Map(variants.map((variant) => [variant.name, { load: [] as number[], ask: [] as number[], answer: [] as number[] }]));
  const rigs = await Promise.all(variants.map((variant) => new ReaderRig().start(variant.html ? { readerHtml: variant.html } : {})));
  try {
    const channels = await Promise.all(rigs.map((rig) => rig.openDocument(markdown, "A long manual")));
    for (let round = 0; round < plan.loads; round += 1) {
      for (const [index, variant] of variants.entries()) {
        ctx.log(`reader, long document: load ${round + 1}/${plan.loads}, ${variant.name}`);
        const reader = await rigs[index]!.openPage({ query: "?agent=off", hash: channels[index]!, timeoutMs: SLOW_MS });
        samples.get(variant.name)!.load.push(await loadTime(reader));
        await reader.page.close();
      }
    }
    const readers = await Promise.all(rigs.map((rig, index) => rig.open({ query: "?agent=off", hash: channels[index]!, timeoutMs: SLOW_MS })));
    await Promise.all(readers.map((reader) => reader.nextMessage("ready")));
    // One unrecorded round first, as in every suite.
    for (let round = -1; round < plan.asks; round += 1) {
      for (const [index, variant] of variants.entries()) {
        if (round >= 0) ctx.log(`reader, long document: ask ${round + 1}/${plan.asks}, ${variant.name}`);
        const reader = readers[index]!;
        await reader.selectAndAsk(marker);
        const submittedAt = await reader.submit(`Question ${round}?`);
        const { message, at } = await reader.nextMessage("ask");
        const answer = await reader.answer(String(message.data.thread_id), `Answer ${round}.`, `Answer ${round}.`);
        if (round < 0) continue;
        samples.get(variant.name)!.ask.push(at - submittedAt);
        samples.get(variant.name)!.answer.push(answer);
      }
    }
  } finally {
    await Promise.all(rigs.map((rig) => rig.stop()));
    await rm(beforeDir, { recursive: true, force: true });
  }
  const after = samples.get("after")!;
  const before = samples.get("before");
  const figure = (key: "load" | "ask" | "answer", name: string): SoloFigure => ({
    key: `reader.long.${key}`,
    name: `reader, 1 MiB markdown: ${name}`,
    unit: "ms",
    solo: true,
    samples: after[key],
    ...(before && { against: { name: `the reader of ${plan.beforeCommit}`, samples: before[key] } }),
  });
  return [
    figure("load", "load (iframe start → document in the DOM)"),
    figure("ask", "ask → agent (Enter → poll_agent_messages returns it)"),
    figure("answer", "answer → screen (notify_ui → text in the card)"),
  ];
}

/**
 * The reader's load time in `reader`'s frame: its navigation start → the document's first
 * block in the DOM (checked every 10 ms; the whole document goes in at once). Not "painted":
 * animation frames of a frame hundreds of thousands of pixels tall may not come for minutes.
 */
async function loadTime(reader: ReaderPage): Promise<number> {
  const handle = await reader.page.locator("#frame iframe").elementHandle();
  const frame = await handle!.contentFrame();
  const found = await frame!.waitForFunction(() => (document.querySelector("#doc [data-block]") ? performance.now() : 0), undefined, {
    polling: 10,
    timeout: SLOW_MS,
  });
  return (await found.jsonValue()) as number;
}

/**
 * Builds the reader of `commit` into `dir`: its app/ and protocol/ from `git archive`,
 * this checkout's node_modules, and its own Vite config. Returns the HTML file.
 * @throws when git or the build fails.
 */
async function buildReaderAt(commit: string, dir: string): Promise<string> {
  const archive = execFileSync("git", ["-C", ROOT, "archive", "--format=tar", commit, "app", "protocol"], { maxBuffer: 64 * 1024 * 1024 });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  execFileSync(process.execPath, [join(ROOT, "node_modules/vite/bin/vite.js"), "build", "--config", "app/vite.config.ts"], {
    cwd: dir,
    stdio: "ignore",
  });
  return join(dir, "dist/app/reader.html");
}
