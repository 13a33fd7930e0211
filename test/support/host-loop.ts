/**
 * The reader loop every host's test runs, from the app's side: an app (an SDK client on
 * the same data directory, as the reader is) asks one question at a time, follow-ups
 * included (a thread asked again, with its history), and reads each answer as the reader
 * would, with a cursor. The host's test waits for the agent's turn to end between asks,
 * so that each ask's model requests can be counted (claude-code/figures.ts `askFigures`).
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";
import { askFigures } from "./claude-code/figures.js";
import { connectServer, structured } from "./helpers.js";

/** One question the app asks. */
export interface Ask {
  thread: string;
  question: string;
  /** The thread so far (empty for a new thread). */
  history: { role: "user" | "agent"; text: string }[];
}

/** Five asks: three threads, two of them asked again with their history. */
export const FIVE_ASKS: Ask[] = [
  { thread: "t-1", question: "Why is the queue the truth?", history: [] },
  { thread: "t-2", question: "What wakes the agent?", history: [] },
  {
    thread: "t-1",
    question: "And when the agent dies before it answers?",
    history: [
      { role: "user", text: "Why is the queue the truth?" },
      { role: "agent", text: "Answer to t-1" },
    ],
  },
  { thread: "t-3", question: "What does an ask carry?", history: [] },
  {
    thread: "t-2",
    question: "Even after a long silence?",
    history: [
      { role: "user", text: "What wakes the agent?" },
      { role: "agent", text: "Answer to t-2" },
    ],
  },
];

/** The app's side of a loop on one channel. */
export class AskingApp {
  private cursor = 0;

  constructor(
    private readonly client: Client,
    readonly channel: string,
  ) {}

  /**
   * Asks `ask` and waits for its answer (an `answer` on its thread after the ask).
   * @returns when the ask's `notify_agent` returned and when the answer arrived (`performance.now()`), and the answer's text.
   * @throws when no answer comes within `timeoutMs` (default 60,000).
   */
  async ask(ask: Ask, timeoutMs = 60_000): Promise<{ askedAt: number; answeredAt: number; text: string }> {
    const data = {
      thread_id: ask.thread,
      quote: "The queue is the truth.",
      paragraph: "The queue is the truth. Everything else is a doorbell.",
      question: ask.question,
      history: ask.history,
    };
    await this.client.callTool({ name: "notify_agent", arguments: { channel_id: this.channel, event: "ask", data } });
    const askedAt = performance.now();
    for (;;) {
      const left = askedAt + timeoutMs - performance.now();
      if (left <= 0) throw new Error(`no answer to ${ask.thread} (${JSON.stringify(ask.question)}) within ${timeoutMs} ms`);
      const polled = structured<{ messages: { event: string; data: { thread_id?: string; text?: string } }[]; cursor: number }>(
        await this.client.callTool({
          name: "poll_ui_messages",
          arguments: { channel_id: this.channel, after: this.cursor, wait_ms: Math.min(30_000, Math.ceil(left)) },
        }),
      );
      this.cursor = polled.cursor;
      const answer = polled.messages.find((message) => message.event === "answer" && message.data.thread_id === ask.thread);
      if (answer) return { askedAt, answeredAt: performance.now(), text: answer.data.text ?? "" };
    }
  }

  /** Sends an event the agent must not be woken for (the reader's `ready`). */
  async ready(): Promise<void> {
    await this.client.callTool({ name: "notify_agent", arguments: { channel_id: this.channel, event: "ready", data: {} } });
  }
}

/** The idle seconds before each of five asks in the hosts' loop tests: one 5-minute gap (`BACKCHANNEL_HOST_IDLE_S` overrides it, for a quick local run). */
export function idleGaps(): number[] {
  const idle = Number(process.env.BACKCHANNEL_HOST_IDLE_S ?? 300);
  return [0, 0, idle, 0, 0];
}

/**
 * The instructions the server on `dataDir` gives a host that shows no apps, started as
 * the hosts' install steps start it (`serve --wake hook`: `install codex`, the Gemini CLI
 * extension): what such a host's model must be shown.
 */
export async function instructionsAsInstalled(dataDir: string): Promise<string> {
  const plain = await connectServer(dataDir, {}, { capabilities: {}, args: ["--wake", "hook"] });
  try {
    return plain.getInstructions() ?? "";
  } finally {
    await plain.close();
  }
}

/** A turn as the loop reads it. */
interface LoopTurn {
  at: number;
  sinceLastReply: string;
  backchannelResult(name: string): string | undefined;
}

/** A scripted model as the loop reads it: its turns, and a wait for one. */
export interface LoopModel {
  turns(): LoopTurn[];
  waitForTurn(match: (turn: LoopTurn) => boolean, options?: { timeoutMs?: number }): Promise<LoopTurn>;
}

/**
 * The hosts' loop test: the app says `ready`, then asks {@link FIVE_ASKS} one by one after
 * {@link idleGaps}, and every ask must take exactly two model requests (the wake →
 * notify_ui with ack; its result → end of turn), with none in the idle stretches.
 * @throws AssertionError naming the ask and the last requests when one does not.
 */
export async function checkFiveAsks(host: string, asking: AskingApp, model: LoopModel): Promise<void> {
  await asking.ready();
  const asks = await askOneByOne(
    asking,
    model,
    FIVE_ASKS,
    idleGaps().map((seconds) => seconds * 1000),
  );
  const figures = askFigures(
    model.turns().map((turn) => turn.at),
    asks,
  );
  const rounded = figures.map((ask) => ({ ...ask, askToTurnMs: Math.round(ask.askToTurnMs), askToAnswerMs: Math.round(ask.askToAnswerMs) }));
  process.stderr.write(`${host} asks: ${JSON.stringify(rounded)}\n`);
  const recent = () =>
    model
      .turns()
      .slice(-12)
      .map((turn) => turn.sinceLastReply.slice(0, 80))
      .join(" | ");
  for (const [index, ask] of figures.entries()) {
    assert.equal(ask.requests, 2, `ask ${index + 1} took ${ask.requests} model requests: ${recent()}`);
    assert.equal(ask.idleRequests, 0, `after ask ${index + 1}, ${ask.idleRequests} requests no message caused: ${recent()}`);
  }
}

/**
 * Asks `asks` one at a time, each after its idle gap (`gapsMs[i]`, ms), each only once the
 * turn that answered the one before has ended (the request carrying notify_ui's result),
 * and checks each answer names its thread.
 * @returns each ask's times; `quietUntil` is the next ask, or the end of a last quiet
 *   stretch of `lastQuietMs` (default 3,000).
 * @throws when an answer or a turn's end takes longer than `stepTimeoutMs` (default 60,000), or an answer is another thread's.
 */
export async function askOneByOne(
  asking: AskingApp,
  model: LoopModel,
  asks: Ask[],
  gapsMs: number[],
  { lastQuietMs = 3_000, stepTimeoutMs = 60_000 } = {},
): Promise<{ askedAt: number; answeredAt: number; endedAt: number; quietUntil: number }[]> {
  const times: { askedAt: number; answeredAt: number; endedAt: number }[] = [];
  for (const [index, ask] of asks.entries()) {
    await new Promise((resolve) => setTimeout(resolve, gapsMs[index] ?? 0));
    const { askedAt, answeredAt, text } = await asking.ask(ask, stepTimeoutMs);
    if (!text.endsWith(` to ${ask.thread}`)) throw new Error(`the answer to ${ask.thread} was ${JSON.stringify(text)}`);
    const ended = await model.waitForTurn((turn) => turn.at > askedAt && turn.backchannelResult("notify_ui") !== undefined, {
      timeoutMs: stepTimeoutMs,
    });
    times.push({ askedAt, answeredAt, endedAt: ended.at });
  }
  await new Promise((resolve) => setTimeout(resolve, lastQuietMs));
  return times.map((ask, index) => ({ ...ask, quietUntil: times[index + 1]?.askedAt ?? performance.now() }));
}
