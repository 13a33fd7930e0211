/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to frame.evaluate() run in the browser: they need the DOM types.
/**
 * A long document in a real host: the reader in MCP Inspector 2.12's Apps tab
 * (test/support/inspector.ts), `backchannel serve` behind mcp-proxy, a 718 KB markdown
 * document (about 160 sections, lists, code and tables) opened by path. The same
 * steps on three pages: the Monitoring sidebar closed; open and never emptied; open
 * and emptied before each ask and each answer. Per page:
 *
 * - load: the page's `open_reader` call → the first screen in the reader (its
 *   `reader:first-screen` mark) and → the whole document (`reader:document`), with
 *   the hops of the reader's state on the way: the page sent `reader_state` →
 *   Inspector's backend pushed its answer down the page's event stream → the reader
 *   had it (`reader:state`); the server alone and through mcp-proxy are timed apart,
 *   by SDK clients calling `reader_state` directly;
 * - a question about a sentence two thirds down → the agent; its answer → the card;
 * - a 60 KB answer → its card; then follow-ups in that thread: Enter → the agent has
 *   the ask, and each short answer → its card (a MutationObserver in the reader's
 *   frame stamps it);
 * - with each, the ms Inspector's own page spent in long tasks meanwhile.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Frame } from "playwright-core";
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { browserSkipReason, connectServer, structured } from "../../test/support/helpers.js";
import { type LongTask, type OpenedApp, startInspector, startServer } from "../../test/support/inspector.js";
import { longMarkdown } from "../../test/support/long-document.js";
import { askAbout, askFollowUp, ReaderAgent, watchAnswer } from "../../test/support/reader-driver.js";
import { APPS_HOST_EXTENSIONS } from "../../protocol/client-capabilities.js";

/** How much each page measures. */
export interface InspectorLongPlan {
  /** Follow-ups asked after the long answer, on each page. */
  followUps: number;
  /** Direct `reader_state` calls timed on the server and through mcp-proxy. */
  stateCalls: number;
}

/** The document's size and paragraphs per section: 718 KB in about 160 sections, the one measured before. */
const DOCUMENT_BYTES = 718 * 1024;
const SECTION_PARAGRAPHS = 11;
/** The long answer's size. */
const ANSWER_BYTES = 60 * 1024;

/** How one page is run. */
type Sidebar = "closed" | "open" | "emptied";

/** What one page measured. */
interface PageRun {
  load: { firstScreen: number; whole: number; stateSent: number; stateStreamed: number; stateInApp: number };
  loadBusy: number;
  deepAnswer: number;
  longAnswer: number;
  longAnswerBusy: number;
  followUpAsk: number[];
  followUpAskBusy: number[];
  followUpAnswer: number[];
}

/** Measures the long document in Inspector; no figures (and a note) when Chromium is missing. */
export async function inspectorLongFigures(plan: InspectorLongPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const skip = browserSkipReason();
  if (skip) {
    ctx.log(`inspector, long document: skipped (${skip})`);
    return [];
  }
  const { markdown, marker } = longMarkdown(DOCUMENT_BYTES, SECTION_PARAGRAPHS);
  const path = join(ctx.root, "long-manual.md");
  await writeFile(path, markdown);
  const longAnswer = longMarkdown(ANSWER_BYTES).markdown;
  const proxied = await startServer(ctx.root, "mcp-proxy");
  const inspector = await startInspector();
  const runs = new Map<Sidebar, PageRun>();
  let hops: { server: number[]; proxy: number[] } | undefined;
  try {
    for (const sidebar of ["closed", "open", "emptied"] as const) {
      ctx.log(`inspector, long document: the Monitoring sidebar ${sidebar}`);
      const channelId = `ch-long-${sidebar}`;
      const agent = await ReaderAgent.start(ctx.root, channelId);
      try {
        const opened = await inspector.openApp(proxied, "open_reader", { path, channel_id: channelId }, { sidebar: sidebar !== "closed" });
        runs.set(sidebar, await runPage(opened, agent, { sidebar, marker, longAnswer, followUps: plan.followUps }, ctx));
        if (!hops) hops = await stateHops(ctx.root, proxied.url, channelId, plan.stateCalls);
        await opened.close();
      } finally {
        await agent.close();
      }
    }
  } finally {
    await inspector.close();
    await proxied.stop();
  }
  const ms = (key: string, name: string, samples: number[], details?: Record<string, number>): SoloFigure => ({
    key: `inspector.long.${key}`,
    name: `Inspector, 718 KB markdown, ${name}`,
    unit: "ms",
    solo: true,
    samples,
    ...(details && { details }),
  });
  const figures: SoloFigure[] = [
    ms("server.state", "reader_state on the server alone (SDK client over stdio)", hops!.server),
    ms("proxy.state", "reader_state through mcp-proxy (SDK client over Streamable HTTP)", hops!.proxy),
  ];
  for (const [sidebar, run] of runs) {
    const label = sidebar === "emptied" ? "sidebar open, emptied before each step" : `sidebar ${sidebar}`;
    figures.push(
      ms(`${sidebar}.firstScreen`, `${label}: open_reader call → first screen`, [run.load.firstScreen], {
        "page sent reader_state (ms after the call)": Math.round(run.load.stateSent),
        "its answer on the page's event stream": Math.round(run.load.stateStreamed),
        "the reader had it": Math.round(run.load.stateInApp),
        "Inspector page's long tasks meanwhile": Math.round(run.loadBusy),
      }),
      ms(`${sidebar}.whole`, `${label}: open_reader call → whole document`, [run.load.whole]),
      ms(`${sidebar}.deepAnswer`, `${label}: answer to a question deep in it → card`, [run.deepAnswer]),
      ms(`${sidebar}.longAnswer`, `${label}: a 60 KB answer → card`, [run.longAnswer], {
        "Inspector page's long tasks meanwhile": Math.round(run.longAnswerBusy),
      }),
      ms(`${sidebar}.followUpAsk`, `${label}: follow-up after the 60 KB answer, Enter → agent`, run.followUpAsk, {
        "Inspector page's long tasks meanwhile (median)": median(run.followUpAskBusy),
      }),
      ms(`${sidebar}.followUpAnswer`, `${label}: answer to a follow-up → card`, run.followUpAnswer),
    );
  }
  return figures;
}

/** What {@link runPage} needs besides the page. */
interface PageScript {
  sidebar: Sidebar;
  marker: string;
  longAnswer: string;
  followUps: number;
}

async function runPage(opened: OpenedApp, agent: ReaderAgent, script: PageScript, ctx: RunContext): Promise<PageRun> {
  const { frame } = opened;
  const marks = await readerMarks(frame);
  const calledAt = opened.opening.sentAt;
  const stateCall = opened.toolCalls("reader_state").at(-1);
  const load = {
    firstScreen: marks["reader:first-screen"]! - calledAt,
    whole: marks["reader:document"]! - calledAt,
    stateSent: (stateCall?.sentAt ?? Number.NaN) - calledAt,
    stateStreamed: (stateCall?.streamedAt ?? Number.NaN) - calledAt,
    stateInApp: marks["reader:state"]! - calledAt,
  };
  const loadBusy = busyBetween(await opened.longTasks(), calledAt, marks["reader:document"]!);
  const since = (at: number | undefined) => (at === undefined ? "?" : (at - calledAt).toFixed(0));
  const steps = opened.calls
    .filter((call) => call.sentAt >= calledAt && call.sentAt <= marks["reader:document"]!)
    .map((call) => `${call.tool ?? call.method} ${since(call.sentAt)}→${since(call.streamedAt)}`);
  const frameSteps = Object.entries(marks).map(([name, at]) => `${name.replace(/^reader:/, "")} ${since(at)}`);
  ctx.log(`  calls (sent→streamed, ms after open_reader): ${steps.join(", ")}`);
  ctx.log(`  the reader's marks: ${frameSteps.join(", ")}`);
  ctx.log(
    `  load: first screen ${load.firstScreen.toFixed(0)} ms, whole ${load.whole.toFixed(0)} ms (reader_state sent ${load.stateSent.toFixed(0)}, ` +
      `streamed ${load.stateStreamed.toFixed(0)}, in the reader ${load.stateInApp.toFixed(0)}); Inspector's page busy ${loadBusy.toFixed(0)} ms`,
  );
  await agent.next("ready", 60_000);
  const emptied = script.sidebar === "emptied";
  const clear = async () => {
    if (emptied) await opened.clearMessages();
  };
  await clear();
  await askAbout(frame, script.marker, "What does the marker sentence mean?");
  const { ask } = await agent.nextAsk(60_000);
  if (!ask.paragraph.includes(script.marker)) throw new Error(`the ask's paragraph lacks the marker: ${JSON.stringify(ask.paragraph.slice(0, 200))}`);
  const threadId = ask.thread_id;
  const answerAndTime = async (text: string, needle: string) => {
    await clear();
    const appeared = await watchAnswer(frame, threadId, needle);
    const sentAt = await agent.send("answer", { thread_id: threadId, text });
    const shownAt = await appeared();
    return { took: shownAt - sentAt, busy: busyBetween(await opened.longTasks(), sentAt, shownAt) };
  };
  const deepAnswer = (await answerAndTime("The marker is the sentence the test asks about.", "the test asks about")).took;
  await clear();
  await askFollowUp(frame, threadId, "Tell me everything.");
  await agent.nextAsk(60_000);
  const long = await answerAndTime(`${script.longAnswer}\n\nThat is all.`, "That is all.");
  ctx.log(`  answers: deep ${deepAnswer.toFixed(0)} ms, 60 KB ${long.took.toFixed(0)} ms (page busy ${long.busy.toFixed(0)})`);
  const run: PageRun = {
    load,
    loadBusy,
    deepAnswer,
    longAnswer: long.took,
    longAnswerBusy: long.busy,
    followUpAsk: [],
    followUpAskBusy: [],
    followUpAnswer: [],
  };
  for (let i = 0; i < script.followUps; i += 1) {
    await clear();
    const question = `Follow-up ${i + 1}?`;
    const enteredAt = await askFollowUp(frame, threadId, question);
    const { ask: followUp, at } = await agent.nextAsk(60_000);
    if (followUp.question !== question) throw new Error(`the agent got ${JSON.stringify(followUp.question)}, not ${JSON.stringify(question)}`);
    run.followUpAsk.push(at - enteredAt);
    run.followUpAskBusy.push(busyBetween(await opened.longTasks(), enteredAt, at));
    const answer = await answerAndTime(`Answer to follow-up ${i + 1}.`, `follow-up ${i + 1}.`);
    run.followUpAnswer.push(answer.took);
    // A person reads the answer before the next question.
    await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700));
  }
  ctx.log(
    `  follow-ups: Enter → agent ${run.followUpAsk.map((v) => v.toFixed(0)).join(", ")} ms; → card ${run.followUpAnswer.map((v) => v.toFixed(0)).join(", ")} ms`,
  );
  return run;
}

/** The reader's `performance.mark`s as `Date.now()` times, once its whole document is in. */
async function readerMarks(frame: Frame): Promise<Record<string, number>> {
  await frame.waitForFunction(() => performance.getEntriesByName("reader:document").length > 0, undefined, { polling: 50, timeout: 300_000 });
  return frame.evaluate(() =>
    Object.fromEntries(performance.getEntriesByType("mark").map((mark) => [mark.name, performance.timeOrigin + mark.startTime])),
  );
}

/** `reader_state` of `channelId` timed `calls` times on a server of its own (stdio) and through mcp-proxy at `proxyUrl`. */
async function stateHops(dataDir: string, proxyUrl: URL, channelId: string, calls: number): Promise<{ server: number[]; proxy: number[] }> {
  const time = async (client: Client) => {
    const samples: number[] = [];
    for (let i = 0; i < calls; i += 1) {
      const startedAt = performance.now();
      structured(await client.callTool({ name: "reader_state", arguments: { channel_id: channelId } }));
      samples.push(performance.now() - startedAt);
    }
    return samples;
  };
  const direct = await connectServer(dataDir);
  const viaProxy = new Client({ name: "backchannel-bench", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
  await viaProxy.connect(new StreamableHTTPClientTransport(proxyUrl));
  try {
    return { server: await time(direct), proxy: await time(viaProxy) };
  } finally {
    await Promise.all([direct.close(), viaProxy.close()]);
  }
}

/** How many ms of `tasks` fall between `from` and `to`. */
function busyBetween(tasks: LongTask[], from: number, to: number): number {
  return tasks.reduce((busy, task) => busy + Math.max(0, Math.min(to, task.startedAt + task.duration) - Math.max(from, task.startedAt)), 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : Math.round(sorted[Math.floor(sorted.length / 2)]!);
}
