/**
 * The scripted model of an agent-written app on the plugin's path: asked for an app, it
 * does what backchannel's instructions (as Claude Code shows them) say first, reads the
 * custom-apps recipe, and opens the recipe's sortable list with the `open_app` call
 * written there; its reply gives the person the link the result names (`app_url`). It
 * arms nothing: woken by the plugin's Stop hook, it reads the app's messages from the
 * wake text and replies with the calls the recipe writes (the items on `ready`, a note
 * naming the top two on `order`), the `ack` the wake text gives added to its last call.
 */
import { AppRecipe } from "../app-agent.js";
import { findCall, toolCalls } from "../recipe-text.js";
import type { Action, Policy, Turn } from "./model-server.js";
import { pluginTool, readerLinkOf, sinceLastReply } from "./plugin-policy.js";
import { instructionText } from "./reader-policy.js";

/** A message of the app, as the wake text shows it. */
export interface WokenMessage {
  seq: number;
  event: string;
  data: Record<string, unknown>;
}

/** The policy, and what it saw. */
export interface AppJourney {
  policy: Policy;
  /** The messages the model was woken for, in order. */
  woken: WokenMessage[];
}

/** What the model says to `order {items}`: its top two. */
export function notedText(items: readonly string[]): string {
  return `Got it: ${items[0]} first, then ${items[1]}.`;
}

/**
 * The policy: a prompt that contains `ask` starts the app (read_recipe as the instructions
 * write it, then the recipe's list app); every other request without a wake ends the turn.
 * @throws (inside the policy: the model server answers HTTP 500 and keeps it in `errors`)
 *   when the instructions or the recipe lack a call it needs.
 */
export function pluginAppPolicy(ask: string): AppJourney {
  let recipe: AppRecipe | undefined;
  const journey: AppJourney = { policy: () => undefined, woken: [] };
  journey.policy = (turn: Turn) => {
    const opened = turn.result(pluginTool("open_app"));
    if (opened) {
      const link = readerLinkOf(opened.text, "app_url");
      return { text: link ? `Your app is open in your browser: ${link}` : `The app did not open: ${opened.text}` };
    }
    const read = turn.result(pluginTool("read_recipe"));
    if (read) {
      recipe = AppRecipe.of(JSON.parse(read.text.slice(read.text.indexOf("{"))).recipe.text as string);
      return { tool: pluginTool("open_app"), input: recipe.openCall("list_html") };
    }
    if (turn.result(pluginTool("notify_ui"))) return { text: "Replied in the app." };
    const wake = recipe && appWake(sinceLastReply(turn));
    if (recipe && wake) {
      journey.woken.push(...wake.messages);
      const replies = wake.messages.flatMap((message) => reply(recipe!, wake.channelId, message));
      if (replies.length === 0) return { text: "Nothing to reply." };
      Object.assign((replies.at(-1) as { input: Record<string, unknown> }).input, wake.ack);
      return replies;
    }
    if (turn.results.length === 0 && turn.lastText.includes(ask)) {
      const written = findCall(toolCalls(instructionText(turn)), "read_recipe", { name: "custom-apps" });
      return { tool: pluginTool("read_recipe"), input: written.args };
    }
    return { text: "Nothing to do." };
  };
  return journey;
}

/** The recipe's reply to `message`, if it has one. */
function reply(recipe: AppRecipe, channelId: string, message: WokenMessage): Action[] {
  if (message.event === "ready") return [{ tool: pluginTool("notify_ui"), input: recipe.reply(channelId, "items") }];
  if (message.event !== "order") return [];
  const input = recipe.reply(channelId, "noted");
  input.data = { text: notedText(message.data.items as string[]) };
  return [{ tool: pluginTool("notify_ui"), input }];
}

/**
 * The app's messages in a wake's text (the plugin's Stop hook reminder): the channel,
 * each `- #<seq> <event>: <data>` line, and the `ack` to add to the last call;
 * `undefined` when the text names no app's messages.
 */
function appWake(text: string): { channelId: string; messages: WokenMessage[]; ack: Record<string, unknown> } | undefined {
  const start = text.search(/^App (?:"[^\n]*" )?on channel \S+:$/m);
  if (start < 0) return undefined;
  const [heading, ...lines] = text.slice(start).split("\n");
  const channelId = /on channel (\S+):$/.exec(heading!)![1]!;
  const messages: WokenMessage[] = [];
  for (const line of lines) {
    const match = /^- #(\d+) ([^:]+): (.*)$/.exec(line);
    if (!match) break;
    messages.push({ seq: Number(match[1]), event: match[2]!, data: JSON.parse(match[3]!) as Record<string, unknown> });
  }
  const ack = /add ("ack":\d+(?:,"ack_epoch":"[^"]+")?) to your last call/.exec(text)?.[1];
  if (ack === undefined) return undefined;
  return { channelId, messages, ack: JSON.parse(`{${ack}}`) as Record<string, unknown> };
}
