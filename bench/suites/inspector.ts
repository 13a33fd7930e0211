/**
 * The reader in a real MCP Apps host, MCP Inspector 2.12's Apps tab in headless
 * Chromium, reaching `backchannel serve` (stdio) through mcp-proxy, as a user bridges a
 * stdio server (test/support/inspector.ts). backchannel alone: the polling baseline has
 * no app (see ../solo.ts).
 *
 * A person asks at a brisk pace (a new thread, then two follow-ups, again and again);
 * the agent, an SDK client of its own server process on the same data directory,
 * reads each ask and answers at once. Per ask:
 * - ask → agent: from the page's Enter to the agent's poll returning the ask;
 * - notify_ui → screen: from just before the agent's `notify_ui` to the answer's text
 *   in the card (a MutationObserver in the reader stamps it);
 * - notify_ui → backend: to the moment Inspector's backend answers the page's request
 *   for the poll that carried the answer (the rest is Inspector's page and the reader);
 * all with Inspector's Monitoring sidebar closed, and open with its Messages panel
 * emptied before each ask and before each answer (it slows every call as it fills).
 * Then the reader idles: app calls per minute, from the spacing of the calls the page
 * sent in the window. Also counted: polls that did not wait (after the first, which
 * never waits), and calls the reader cancelled.
 */
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { browserSkipReason } from "../../test/support/helpers.js";
import { type InspectorHost, type OpenedApp, startInspector, startServer } from "../../test/support/inspector.js";
import { askAbout, askFollowUp, ReaderAgent, watchAnswer } from "../../test/support/reader-driver.js";

/** How much each run measures. */
export interface InspectorPlan {
  /** Asks in each sidebar setting (at least 9). */
  asks: number;
  /** How long the reader idles while its calls are counted. */
  idleMs: number;
}

/** What one page measured. */
interface PageRun {
  askToAgent: number[];
  answerToScreen: number[];
  /** From just before notify_ui to Inspector's backend answering the page's request for the poll that carried it. */
  answerAtBackend: number[];
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
  const server = await startServer(ctx.root, "mcp-proxy");
  const inspector = await startInspector();
  try {
    ctx.log(`inspector: ${plan.asks} asks, Monitoring sidebar closed`);
    const closed = await runPage(inspector, server, "ch-bench-closed", plan, ctx, false);
    ctx.log(`inspector: reader idle for ${plan.idleMs / 1000} s`);
    const idle = await idleCallsPerMinute(closed.opened, plan.idleMs);
    await closed.opened.close();
    ctx.log(`inspector: ${plan.asks} asks, Monitoring sidebar open, emptied before each ask and answer`);
    const open = await runPage(inspector, server, "ch-bench-sidebar", plan, ctx, true);
    await open.opened.close();
    const ms = (key: string, name: string, samples: number[]): SoloFigure => ({ key, name, unit: "ms", solo: true, samples });
    const count = (key: string, name: string, value: number): SoloFigure => ({ key, name, unit: "calls", solo: true, samples: [value] });
    return [
      ms("inspector.askToAgent", "Inspector, sidebar closed: ask (Enter) → agent has it", closed.run.askToAgent),
      ms("inspector.answerToScreen", "Inspector, sidebar closed: notify_ui → answer on screen", closed.run.answerToScreen),
      ms("inspector.answerAtBackend", "Inspector, sidebar closed: notify_ui → Inspector's backend has the poll's answer", closed.run.answerAtBackend),
      ms("inspector.sidebar.askToAgent", "Inspector, sidebar open (emptied): ask → agent", open.run.askToAgent),
      ms("inspector.sidebar.answerToScreen", "Inspector, sidebar open (emptied): notify_ui → screen", open.run.answerToScreen),
      { key: "inspector.idleCalls", name: "Inspector: idle reader's app calls per minute", unit: "calls/min", solo: true, samples: [idle] },
      count("inspector.shortPolls", "Inspector: polls that did not wait, after the first", closed.run.shortPolls + open.run.shortPolls),
      count("inspector.cancels", "Inspector: calls the reader cancelled", closed.run.cancels + open.run.cancels),
    ];
  } finally {
    await inspector.close();
    await server.stop();
  }
}

async function runPage(
  inspector: InspectorHost,
  server: Awaited<ReturnType<typeof startServer>>,
  channelId: string,
  plan: InspectorPlan,
  ctx: RunContext,
  sidebar: boolean,
): Promise<{ opened: OpenedApp; run: PageRun }> {
  const { markdown, passages } = documentFor(Math.ceil(plan.asks / 3));
  const agent = await ReaderAgent.start(ctx.root, channelId);
  try {
    const opened = await inspector.openApp(server, "open_reader", { title: "Bench", markdown, channel_id: channelId }, { sidebar });
    await opened.app.locator("#doc p").first().waitFor();
    await agent.next("ready", 60_000);
    await agent.send("hello", {});
    const run: PageRun = { askToAgent: [], answerToScreen: [], answerAtBackend: [], shortPolls: 0, cancels: 0 };
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
      const text = `Answer ${i + 1}.`;
      const appeared = await watchAnswer(opened.frame, threadId, text);
      const sentAt = await agent.send("answer", { thread_id: threadId, text });
      run.answerToScreen.push((await appeared()) - sentAt);
      const carrier = opened
        .toolCalls("poll_ui_messages")
        .filter((call) => call.sentAt <= sentAt)
        .at(-1);
      if (carrier?.answeredAt !== undefined) run.answerAtBackend.push(carrier.answeredAt - sentAt);
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
