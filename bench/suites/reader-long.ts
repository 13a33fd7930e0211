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
 * - load: the reader iframe's navigation start → its document's first block in the DOM,
 *   the first screen (the frame's own `performance.now()`, checked every 10 ms); and
 *   → the whole document in the DOM (a long one is rendered in slices after its first
 *   screen, `aria-busy` until the last);
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
import { summarize } from "../stats.js";
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
  const samples = new Map(
    variants.map((variant) => [variant.name, { load: [] as number[], whole: [] as number[], ask: [] as number[], answer: [] as number[] }]),
  );
  /** The reader's marks of each load of this checkout's reader. */
  const steps: Record<string, number>[] = [];
  const rigs = await Promise.all(variants.map((variant) => new ReaderRig().start(variant.html ? { readerHtml: variant.html } : {})));
  try {
    const channels = await Promise.all(rigs.map((rig) => rig.openDocument(markdown, "A long manual")));
    for (let round = 0; round < plan.loads; round += 1) {
      for (const [index, variant] of variants.entries()) {
        ctx.log(`reader, long document: load ${round + 1}/${plan.loads}, ${variant.name}`);
        const reader = await rigs[index]!.openPage({ query: "?agent=off", hash: channels[index]!, timeoutMs: SLOW_MS });
        const { first, whole, marks } = await loadTimes(reader);
        samples.get(variant.name)!.load.push(first);
        samples.get(variant.name)!.whole.push(whole);
        if (variant.name === "after") steps.push(marks);
        ctx.log(`  first screen ${first.toFixed(0)} ms, whole ${whole.toFixed(0)} ms; ${describeSteps(marks)}`);
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
  const figure = (key: "load" | "whole" | "ask" | "answer", name: string, details?: Record<string, number>): SoloFigure => ({
    key: `reader.long.${key}`,
    name: `reader, 1 MiB markdown: ${name}`,
    unit: "ms",
    solo: true,
    samples: after[key],
    ...(before && { against: { name: `the reader of ${plan.beforeCommit}`, samples: before[key] } }),
    ...(details && { details }),
  });
  // The median time from navigation start to each of the reader's marks.
  const stepMedians = Object.fromEntries(
    [...new Set(steps.flatMap((marks) => Object.keys(marks)))].map((name) => [
      `${name} (median ms from navigation start)`,
      Math.round(summarize(steps.map((marks) => marks[name] ?? Number.NaN).filter(Number.isFinite)).p50),
    ]),
  );
  return [
    figure("load", "load (iframe start → first screen: the document's first block in the DOM)", stepMedians),
    figure("whole", "load (iframe start → whole document in the DOM)"),
    figure("ask", "ask → agent (Enter → poll_agent_messages returns it)"),
    figure("answer", "answer → screen (notify_ui → text in the card)"),
  ];
}

/**
 * The reader's load times in `reader`'s frame, from its navigation start: to the
 * document's first block in the DOM (`first`: the first screen), and to the whole
 * document in it (`whole`: no longer `aria-busy`; the same moment for a reader that
 * renders everything at once). Checked every 10 ms. With them, the reader's own
 * `performance.mark`s of its steps (app/main.ts; an older reader may have none). Not "painted": animation frames of
 * a frame hundreds of thousands of pixels tall (the old reader's) may not come for minutes.
 */
async function loadTimes(reader: ReaderPage): Promise<{ first: number; whole: number; marks: Record<string, number> }> {
  const handle = await reader.page.locator("#frame iframe").elementHandle();
  const frame = await handle!.contentFrame();
  // Each check finds #doc by id and stops at its first block: cheap on every poll, however long the document.
  const at = async (whole: boolean) => {
    const found = await frame!.waitForFunction(
      (whole) => {
        const doc = document.getElementById("doc");
        return doc?.querySelector("[data-block]") && !(whole && doc.hasAttribute("aria-busy")) ? performance.now() : 0;
      },
      whole,
      { polling: 10, timeout: SLOW_MS },
    );
    return (await found.jsonValue()) as number;
  };
  const first = await at(false);
  const whole = await at(true);
  const marks = await frame!.evaluate(() =>
    Object.fromEntries(performance.getEntriesByType("mark").map((mark) => [mark.name.replace(/^reader:/, ""), mark.startTime])),
  );
  return { first, whole, marks };
}

/** The marks of one load as "script 412, connected 530, …" (ms from navigation start). */
function describeSteps(marks: Record<string, number>): string {
  const entries = Object.entries(marks);
  return entries.length === 0 ? "no marks" : entries.map(([name, at]) => `${name} ${at.toFixed(0)}`).join(", ");
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
