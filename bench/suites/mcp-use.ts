/**
 * The one-chat setting in mcp-use's inspector 20.3.10 (test/support/mcp-use/host.ts):
 * the reader inline in the chat, a scripted Chat Completions model that answers at once,
 * Chromium as the person. In this host the reader's own message (`ui/message`) gives the
 * agent its turn, so an ask costs: the ask reaches the server, the reader's message
 * starts a turn, the model polls, answers with notify_ui, and the answer reaches the card.
 *
 * Read against the host's own floor, measured in the same page between the asks: a
 * message typed into the chat → the model's first request, and → its third, around two
 * MCP calls that do nothing (a poll of an empty channel, a notify_ui to a channel no
 * reader shows): the same shape as an ask's turn, without backchannel's part.
 *
 * Per ask (follow-ups, alternately in two threads, each once the chat is free again):
 * - ask → turn: the card's Enter → the model's request that the reader's message started
 *   (against the floor's typed message → request);
 * - ask → answer: the card's Enter → the answer's text in the card (the page stamps both;
 *   against the floor's typed message → third request);
 * - notify_ui → card: the model's reply that calls notify_ui (it replies at once, so its
 *   request's arrival) → the answer in the card (against the floor's notify_ui → its
 *   result back at the model): the answer's way through the host and the reader;
 * - model requests per ask.
 *
 * Needs the inspector and its Node (`npm run mcp-use:install`) and Chromium; without them
 * the suite is left out with a note.
 */
import type { RunContext } from "../figures.js";
import { type SoloFigure, soloFigure as solo } from "../solo.js";
import { browserSkipReason } from "../../test/support/helpers.js";
import { startOneChat } from "../../test/support/mcp-use/host.js";
import { mcpUseSkipReason } from "../../test/support/mcp-use/install.js";
import type { ChatPolicy, ChatTurn } from "../../test/support/mcp-use/model-server.js";
import { readerChatPolicy } from "../../test/support/mcp-use/reader-policy.js";
import { askAbout, askFollowUp, watchAnswer } from "../../test/support/reader-driver.js";

/** What a mode runs. */
export interface McpUsePlan {
  /** Asks, and as many floor turns. */
  asks: number;
}

const DOCUMENT = "# Notes\n\nThe first passage is about rivers.\n\nThe second passage is about mountains.\n";

/** The floor's turns poll and notify this channel, which no reader shows. */
const FLOOR_CHANNEL = "bench-floor";
const FLOOR_PROMPT = "Floor sample";

/** Longest one sample may take before the run fails. */
const SAMPLE_TIMEOUT_MS = 60_000;

/** The figures: ask → turn and ask → answer against the floor, and requests per ask. */
export async function mcpUseFigures(plan: McpUsePlan, ctx: RunContext): Promise<SoloFigure[]> {
  const skip = browserSkipReason() ?? mcpUseSkipReason();
  if (skip) {
    ctx.log(`mcp-use: left out: ${skip}`);
    return [];
  }
  const reader = readerChatPolicy({ title: "Notes", markdown: DOCUMENT });
  const policy: ChatPolicy = (turn) => floorStep(turn) ?? reader.policy(turn);
  const chat = await startOneChat(policy, { timeoutMs: SAMPLE_TIMEOUT_MS });
  const wall = (turn: ChatTurn) => performance.timeOrigin + turn.at;
  const floor = { toRequest: [] as number[], toThird: [] as number[], notifyRoundTrip: [] as number[] };
  const asks = { toTurn: [] as number[], toAnswer: [] as number[], notifyToCard: [] as number[], requests: [] as number[] };
  try {
    ctx.log("mcp-use: the page, the provider, the reader");
    await chat.configure();
    await chat.send("Open the notes in the reader.");
    await reader.opened;
    const frame = await chat.reader();
    await chat.whenFree();
    // Two threads, asked unrecorded: each measured ask is a follow-up in one of them.
    const threads: string[] = [];
    for (const passage of ["about rivers", "about mountains"]) {
      await askAbout(frame, passage, `What is ${passage}?`);
      await frame.locator(".card .message.agent", { hasText: `What is ${passage}?` }).waitFor();
      threads.push((await frame.locator(".card", { hasText: `What is ${passage}?` }).getAttribute("data-thread")) ?? "");
      await chat.whenFree();
    }
    ctx.log(`mcp-use: ${plan.asks} floor turns and ${plan.asks} asks, alternately`);
    for (let index = 0; index < plan.asks; index++) {
      const fromFloor = chat.model.turns().length;
      const sentAt = await chat.send(`${FLOOR_PROMPT} ${index + 1}.`);
      const first = await chat.model.waitForTurn((turn) => turn.userText.startsWith(FLOOR_PROMPT), { from: fromFloor, timeoutMs: SAMPLE_TIMEOUT_MS });
      const second = await chat.model.waitForTurn((turn) => turn.result("poll_agent_messages") !== undefined, {
        from: fromFloor,
        timeoutMs: SAMPLE_TIMEOUT_MS,
      });
      const third = await chat.model.waitForTurn((turn) => turn.result("notify_ui") !== undefined, { from: fromFloor, timeoutMs: SAMPLE_TIMEOUT_MS });
      floor.toRequest.push(wall(first) - sentAt);
      floor.toThird.push(wall(third) - sentAt);
      floor.notifyRoundTrip.push(third.at - second.at);
      await chat.whenFree();

      const question = `Follow-up ${index + 1}?`;
      const threadId = threads[index % threads.length]!;
      const fromAsk = chat.model.turns().length;
      const answered = await watchAnswer(frame, threadId, `to “${question}”`);
      const askedAt = await askFollowUp(frame, threadId, question);
      const ring = await chat.model.waitForTurn((turn) => turn.userText.includes(question), { from: fromAsk, timeoutMs: SAMPLE_TIMEOUT_MS });
      asks.toTurn.push(wall(ring) - askedAt);
      const answeredAt = await answered();
      asks.toAnswer.push(answeredAt - askedAt);
      // The model answered the poll's result with notify_ui at once: its request's arrival is when the answer left the model.
      const polled = await chat.model.waitForTurn((turn) => turn.result("poll_agent_messages") !== undefined, {
        from: fromAsk,
        timeoutMs: SAMPLE_TIMEOUT_MS,
      });
      asks.notifyToCard.push(answeredAt - wall(polled));
      await chat.whenFree();
      asks.requests.push(chat.model.turns().length - fromAsk);
      if ((index + 1) % 5 === 0) ctx.log(`mcp-use: ${index + 1} of ${plan.asks}`);
    }
    if (chat.model.errors.length > 0) throw new Error(`the scripted model failed: ${chat.model.errors.map(String).join("; ")}`);
    if (reader.answered.length !== plan.asks + 2) throw new Error(`${reader.answered.length} answers for ${plan.asks + 2} asks`);
  } finally {
    await chat.close();
  }
  return [
    {
      ...solo("mcp-use.askToTurn", "mcp-use: ask → model request (the reader's message)", asks.toTurn),
      against: { name: "floor: typed message → model request", samples: floor.toRequest },
    },
    {
      ...solo("mcp-use.askToAnswer", "mcp-use: ask → answer in the card", asks.toAnswer),
      against: { name: "floor: typed message → 3rd request, 2 idle MCP calls", samples: floor.toThird },
    },
    {
      ...solo("mcp-use.notifyToCard", "mcp-use: the model's notify_ui → answer in the card", asks.notifyToCard),
      against: { name: "floor: the model's notify_ui → its result back at the model", samples: floor.notifyRoundTrip },
    },
    { ...solo("mcp-use.requests", "mcp-use: model requests per ask", asks.requests, "requests"), against: { name: "needed: 3" } },
  ];
}

/** The floor's turn: a poll of an empty channel, a notify_ui no reader shows, a line; `undefined` for any other turn. */
function floorStep(turn: ChatTurn): ReturnType<ChatPolicy> | undefined {
  const polled = turn.result("poll_agent_messages");
  if (polled && (polled.input as { channel_id?: string }).channel_id === FLOOR_CHANNEL)
    return { tool: "notify_ui", input: { channel_id: FLOOR_CHANNEL, event: "status", data: { text: "floor" } } };
  const notified = turn.result("notify_ui");
  if (notified && (notified.input as { channel_id?: string }).channel_id === FLOOR_CHANNEL) return { text: "Done." };
  if (turn.userText.startsWith(FLOOR_PROMPT)) return { tool: "poll_agent_messages", input: { channel_id: FLOOR_CHANNEL } };
  return undefined;
}
