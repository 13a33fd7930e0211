/**
 * A model's turn as a policy reads it on any host whose API has no deferred tools (Codex
 * CLI's Responses API, Gemini CLI's Gemini API), and what the policy answers: one
 * scripted model per host (codex/model-server.ts, gemini/model-server.ts) maps these to
 * its wire format and its tool names, so that one policy (wake-policy.ts) serves both.
 */
import { answerFromWake } from "./claude-code/plugin-policy.js";
import type { Action, Reply } from "./scripted-model.js";

/** What the model does in one reply: say a text, call one of backchannel's tools (bare name: `notify_ui`), or a host's own tool. */
export type HostAction = Action | { backchannel: string; input: Record<string, unknown> };

/** A policy's answer: one action, several (calls in one reply), or `undefined` to end the turn with "Done.". */
export type HostReply = Reply<HostAction>;

/** A main-loop request as a policy reads it. */
export interface HostTurn {
  /** Its place among the main-loop requests (0 first). */
  index: number;
  /** `performance.now()` when it arrived. */
  at: number;
  /** What the host added since the model last replied: a prompt, a hook's reason, a queued message, tool outputs. */
  sinceLastReply: string;
  /** The output of backchannel's tool `name` among the results since the model last replied, as the model got it. */
  backchannelResult(name: string): string | undefined;
  /** The output of the host's own tool `name` among those results. */
  toolResult(name: string): string | undefined;
  /** The names of the tools the model was given, as the host names them. */
  toolNames: string[];
}

/** A test's model: given a turn, what to do. It may be async. */
export type HostPolicy = (turn: HostTurn) => HostReply | Promise<HostReply>;

/** What a policy's `undefined` (the end of the turn) sends. */
export const END_OF_TURN: HostAction = { text: "Done." };

/** Options of {@link wakePolicy}. */
export interface WakePolicyOptions {
  /** The document open_reader shows. Default a two-line note. */
  markdown?: string;
}

/**
 * The model of the one-install-step path, which arms nothing: its first request opens
 * the reader; a wake (the summary a hook or waker put into the conversation) is answered
 * with the `notify_ui` call written there (plugin-policy.ts `answerFromWake`); every
 * other request ends the turn.
 */
export function wakePolicy(options: WakePolicyOptions = {}): HostPolicy {
  const markdown = options.markdown ?? "# Notes\n\nThe queue is the truth.";
  return (turn) => {
    if (turn.backchannelResult("open_reader") !== undefined) return { text: "The reader is open." };
    if (turn.backchannelResult("notify_ui") !== undefined) return { text: "Answered." };
    const answer = answerFromWake(turn.sinceLastReply);
    if (answer) return { backchannel: "notify_ui", input: answer };
    if (turn.index === 0) return { backchannel: "open_reader", input: { title: "Host notes", markdown } };
    return { text: "Nothing to do." };
  };
}
