/**
 * The reader in a real MCP Apps host, MCP Inspector 2.12's Apps tab in headless
 * Chromium, reaching `backchannel serve` (stdio) through mcp-proxy, as a user bridges a
 * stdio server, and `backchannel serve --http` directly (test/support/inspector.ts).
 * backchannel alone: the polling baseline has no app (see ../solo.ts).
 *
 * A person asks at a brisk pace (a new thread, then two follow-ups, again and again);
 * the agent, an SDK client of its own server process on the same data directory, reads
 * each ask and answers, at once or after a model's think time. Per ask:
 * - ask → agent: from the page's Enter to the agent's poll returning the ask;
 * - notify_ui → screen: from just before the agent's `notify_ui` to the answer's text
 *   in the card (a MutationObserver in the reader stamps it);
 * - Inspector's page busy: how much of that time Inspector's own page spent in long
 *   tasks (the Long Tasks API). Inspector relays every message between its backend and
 *   the app, and re-renders its whole page for each message and each HTTP exchange it
 *   logs, so an answer that comes right after the ask's own calls waits for those.
 * Runs, each on a page of its own: the sidebar closed, answered at once; the same,
 * answered {@link THINK_MS} after the ask (the page has settled by then); the same
 * against `serve --http`; and the Monitoring sidebar open, its Messages panel emptied
 * before each ask and before each answer (it slows every call as it fills; the Clear
 * click also waits until the page can take it, so the page has settled too).
 * Then the reader idles: app calls per minute, from the spacing of the calls the page
 * sent in the window. Also counted: polls that did not wait (after the first, which
 * never waits), and calls the reader cancelled.
 */
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { browserSkipReason } from "../../test/support/helpers.js";
import {
  type InspectorHost,
  type InspectorServer,
  type LongTask,
  type OpenedApp,
  startInspector,
  startServer,
} from "../../test/support/inspector.js";
import { askAbout, askFollowUp, ReaderAgent, watchAnswer } from "../../test/support/reader-driver.js";

/** How much each run measures. */
export interface InspectorPlan {
  /** Asks in each sidebar setting (at least 9). */
  asks: number;
  /** How long the reader idles while its calls are counted. */
  idleMs: number;
}

/**
 * How long the agent thinks before answering in the runs that let the page settle: less
 * than a model's turn takes, more than Inspector's page needs for an ask's own calls
 * (0.2–0.6 s of rendering on a loaded machine).
 */
const THINK_MS = 1_500;

/** How one page is run. */
interface PageSetting {
  /** The Monitoring sidebar open, emptied before each ask and each answer. */
  sidebar: boolean;
  /** How long the agent waits after it has the ask before it answers. */
  thinkMs: number;
}

/** What one page measured. */
interface PageRun {
  askToAgent: number[];
  answerToScreen: number[];
  /** The ms of Inspector's page's long tasks between notify_ui and the answer on screen. */
  pageBusy: number[];
  /** Polls after the first that did not wait. */
  shortPolls: number;
  /** `notifications/cancelled` the page sent. */
  cancels: number;
}

/** The document: one paragraph per new thread, each with a passage to select. */
function documentFor(threads: number): { markdown: string; passages: string[] } {
  const passages = Array.from({ length: threads }, (_, i) => `passage number ${i + 1}`);
  const paragraphs = passages.map((passage, i) => `Paragraph ${i + 1} holds ${passage}, which the reader asks about.`);
  return { markdown: ["# A document to ask about", ...paragraphs].join("\n\n"), passages };
}

/** Measures the reader in Inspector; no figures (and a note) when Chromium is missing. */
export async function inspectorFigures(plan: InspectorPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const skip = browserSkipReason();
  if (skip) {
    ctx.log(`inspector: skipped (${skip})`);
    return [];
  }
  const proxied = await startServer(ctx.root, "mcp-proxy");
  const direct = await startServer(ctx.root, "http");
  const inspector = await startInspector();
  try {
    ctx.log(`inspector: ${plan.asks} asks, Monitoring sidebar closed, answered at once`);
    const closed = await runPage(inspector, proxied, "ch-bench-closed", plan, ctx, { sidebar: false, thinkMs: 0 });
    ctx.log(`inspector: reader idle for ${plan.idleMs / 1000} s`);
    const idle = await idleCallsPerMinute(closed.opened, plan.idleMs);
    await closed.opened.close();
    ctx.log(`inspector: ${plan.asks} asks, sidebar closed, answered ${THINK_MS} ms after the ask`);
    const settled = await runPage(inspector, proxied, "ch-bench-settled", plan, ctx, { sidebar: false, thinkMs: THINK_MS });
    await settled.opened.close();
    ctx.log(`inspector: the same against serve --http`);
    const http = await runPage(inspector, direct, "ch-bench-http", plan, ctx, { sidebar: false, thinkMs: THINK_MS });
    await http.opened.close();
    ctx.log(`inspector: ${plan.asks} asks, Monitoring sidebar open, emptied before each ask and answer`);
    const open = await runPage(inspector, proxied, "ch-bench-sidebar", plan, ctx, { sidebar: true, thinkMs: 0 });
    await open.opened.close();
    const runs = [closed.run, settled.run, http.run, open.run];
    const ms = (key: string, name: string, samples: number[]): SoloFigure => ({ key, name, unit: "ms", solo: true, samples });
    const count = (key: string, name: string, value: number): SoloFigure => ({ key, name, unit: "calls", solo: true, samples: [value] });
    const sum = (pick: (run: PageRun) => number) => runs.reduce((total, run) => total + pick(run), 0);
    return [
      ms("inspector.askToAgent", "Inspector, sidebar closed: ask (Enter) → agent has it", closed.run.askToAgent),
      ms("inspector.answerToScreen", "Inspector, sidebar closed: notify_ui at once → answer on screen", closed.run.answerToScreen),
      ms("inspector.pageBusy", "Inspector, sidebar closed, at once: its page's long tasks in that time", closed.run.pageBusy),
      ms(
        "inspector.settled.answerToScreen",
        `Inspector, sidebar closed: notify_ui ${THINK_MS} ms after the ask → screen`,
        settled.run.answerToScreen,
      ),
      ms("inspector.settled.pageBusy", `Inspector, sidebar closed, after ${THINK_MS} ms: its page's long tasks`, settled.run.pageBusy),
      ms("inspector.http.answerToScreen", `Inspector → serve --http: notify_ui ${THINK_MS} ms after the ask → screen`, http.run.answerToScreen),
      ms("inspector.sidebar.askToAgent", "Inspector, sidebar open (emptied): ask → agent", open.run.askToAgent),
      ms("inspector.sidebar.answerToScreen", "Inspector, sidebar open (emptied): notify_ui → screen", open.run.answerToScreen),
      { key: "inspector.idleCalls", name: "Inspector: idle reader's app calls per minute", unit: "calls/min", solo: true, samples: [idle] },
      count(
        "inspector.shortPolls",
        "Inspector: polls that did not wait, after the first",
        sum((run) => run.shortPolls),
      ),
      count(
        "inspector.cancels",
        "Inspector: calls the reader cancelled",
        sum((run) => run.cancels),
      ),
    ];
  } finally {
    await inspector.close();
    await Promise.all([proxied.stop(), direct.stop()]);
  }
}

async function runPage(
  inspector: InspectorHost,
  server: InspectorServer,
  channelId: string,
  plan: InspectorPlan,
  ctx: RunContext,
  setting: PageSetting,
): Promise<{ opened: OpenedApp; run: PageRun }> {
  const { sidebar, thinkMs } = setting;
  const { markdown, passages } = documentFor(Math.ceil(plan.asks / 3));
  const agent = await ReaderAgent.start(ctx.root, channelId);
  try {
    const opened = await inspector.openApp(server, "open_reader", { title: "Bench", markdown, channel_id: channelId }, { sidebar });
    await opened.app.locator("#doc p").first().waitFor();
    await agent.next("ready", 60_000);
    await agent.send("hello", {});
    const run: PageRun = { askToAgent: [], answerToScreen: [], pageBusy: [], shortPolls: 0, cancels: 0 };
    let threadId = "";
    for (let i = 0; i < plan.asks; i++) {
      if (sidebar) await opened.clearMessages();
      const question = `Question ${i + 1}?`;
      const enteredAt = i % 3 === 0 ? await askAbout(opened.frame, passages[i / 3]!, question) : await askFollowUp(opened.frame, threadId, question);
      const { ask, at } = await agent.nextAsk(60_000);
      if (ask.question !== question) throw new Error(`the agent got ${JSON.stringify(ask.question)}, not ${JSON.stringify(question)}`);
      threadId = ask.thread_id;
      run.askToAgent.push(at - enteredAt);
      if (sidebar) await opened.clearMessages();
      // The agent's think time: what a model's turn takes at the least, not a wait for anything.
      if (thinkMs > 0) await new Promise((resolve) => setTimeout(resolve, at + thinkMs - Date.now()));
      const text = `Answer ${i + 1}.`;
      const appeared = await watchAnswer(opened.frame, threadId, text);
      const sentAt = await agent.send("answer", { thread_id: threadId, text });
      const shownAt = await appeared();
      run.answerToScreen.push(shownAt - sentAt);
      run.pageBusy.push(busyBetween(await opened.longTasks(), sentAt, shownAt));
      // A person reads the answer before the next question.
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700));
    }
    run.shortPolls = opened
      .toolCalls("poll_ui_messages")
      .slice(1)
      .filter((call) => call.params.wait_ms === 0).length;
    run.cancels = opened.cancels().length;
    return { opened, run };
  } finally {
    await agent.close();
  }
}

/** How many ms of `tasks` fall between `from` and `to`. */
function busyBetween(tasks: LongTask[], from: number, to: number): number {
  return tasks.reduce((busy, task) => busy + Math.max(0, Math.min(to, task.startedAt + task.duration) - Math.max(from, task.startedAt)), 0);
}

/** The app calls per minute of an idle reader: from the spacing of the calls the page sent during `windowMs`. */
async function idleCallsPerMinute(opened: OpenedApp, windowMs: number): Promise<number> {
  // Let the last answer's own calls (recording it, the next poll) go out first.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const from = Date.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const calls = opened.calls.filter((call) => call.method === "tools/call" && call.sentAt >= from);
  if (calls.length < 2) throw new Error(`the idle reader made ${calls.length} call(s) in ${windowMs} ms: too few to space`);
  return (60_000 * (calls.length - 1)) / (calls.at(-1)!.sentAt - calls[0]!.sentAt);
}
