/**
 * The scripted model of the plugin's path (docs/claude-code-plugin.md): it opens the
 * reader once and never arms or re-arms anything. Woken by the plugin's Stop hook, it
 * answers the ask its reminder names with the `notify_ui` call written there (with
 * `ack` and `ack_epoch`), and ends the turn on that call's result. Used by test/claude-code-plugin.test.ts
 * and the Claude Code bench suite.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelServer, Policy, Turn } from "./model-server.js";
import { textOf } from "./model-server.js";
import { waitUntil } from "../helpers.js";
import type { ClaudeSession, StreamEvent } from "./session.js";

/** The checkout's plugin folder, for `claude --plugin-dir`. */
export const PLUGIN_ROOT = fileURLToPath(new URL("../../../../plugin", import.meta.url));

/** Claude Code's name for a tool of the plugin's MCP server. */
export function pluginTool(name: string): string {
  return `mcp__plugin_backchannel_backchannel__${name}`;
}

/** The text Claude Code added since the model last spoke (a prompt, tool results, a hook's reminder). */
export function sinceLastReply(turn: Turn): string {
  const messages = turn.request.messages;
  const lastReply = messages.findLastIndex((message) => message.role === "assistant");
  return messages
    .slice(lastReply + 1)
    .map((message) => textOf(message.content))
    .join("\n");
}

/**
 * The arguments of the `notify_ui` call a wake's summary names (the first, when it names
 * several), `ack` and `ack_epoch` as written there, the answer's text "Answer #<ack> to
 * <thread id>" (so that each answer of a thread differs); `undefined` when the text is no wake.
 */
export function answerFromWake(text: string): Record<string, unknown> | undefined {
  const match = /"channel_id":"([^"]+)","event":"answer","data":\{"thread_id":"([^"]+)","text":"…"\},"ack":(\d+)(?:,"ack_epoch":"([^"]+)")?/.exec(
    text,
  );
  if (!match) return undefined;
  const [, channel, thread, ack, epoch] = match;
  return {
    channel_id: channel,
    event: "answer",
    data: { thread_id: thread, text: `Answer #${ack} to ${thread}` },
    ack: Number(ack),
    ...(epoch === undefined ? {} : { ack_epoch: epoch }),
  };
}

/** Options of {@link pluginPolicy}. */
export interface PluginPolicyOptions {
  /** The document open_reader shows. Default a two-line note. */
  markdown?: string;
  /**
   * The document a person's prompt asks to open, or `undefined` for a prompt that opens
   * none. Default: the first prompt opens {@link PluginPolicyOptions.markdown}.
   */
  open?: (prompt: string) => { title: string; markdown: string } | undefined;
}

/**
 * The link open_reader's (or open_app's) result tells the model to give the person, read
 * as Claude Code shows the result to its model (`structuredContent` as JSON): its
 * `field` (default `reader_url`) when `next_step` says to give it; `undefined` when the
 * result asks for no link (a client that shows apps).
 */
export function readerLinkOf(resultText: string, field: "reader_url" | "app_url" = "reader_url"): string | undefined {
  if (!/"next_step":"Give the person the link/.test(resultText)) return undefined;
  return new RegExp(`"${field}":"(http[^"]+)"`).exec(resultText)?.[1];
}

/**
 * The policy: a prompt that names a document (its first, by default) opens the reader,
 * and the turn ends with the link the result says to give the person, when it says so;
 * a wake is answered with notify_ui (the answer's text is "Answer #<seq of the ask> to
 * <thread id>", so that each answer of a thread differs); every other request ends the turn.
 */
export function pluginPolicy(options: PluginPolicyOptions = {}): Policy {
  const markdown = options.markdown ?? "# Notes\n\nThe queue is the truth.";
  const open = options.open ?? ((_prompt: string) => ({ title: "Plugin notes", markdown }));
  return (turn) => {
    const opened = turn.result(pluginTool("open_reader"));
    if (opened) {
      const link = readerLinkOf(opened.text);
      return { text: link ? `The reader is open in your browser: ${link}` : "The reader is open." };
    }
    if (turn.result(pluginTool("notify_ui"))) return { text: "Answered." };
    const answer = answerFromWake(sinceLastReply(turn));
    if (answer) return { tool: pluginTool("notify_ui"), input: answer };
    const document = turn.results.length === 0 && (options.open || turn.index === 0) ? open(turn.lastText) : undefined;
    if (document) return { tool: pluginTool("open_reader"), input: document };
    return { text: "Nothing to do." };
  };
}

/**
 * Resolves once a session watcher (the plugin's wake hook) holds a claim in `dataDir`:
 * the Stop hook runs and is subscribed.
 * @throws when none does within `timeoutMs` (default 30,000).
 */
export async function waitForWatcher(dataDir: string, timeoutMs = 30_000): Promise<void> {
  const folder = join(dataDir, "watchers");
  const claimed = async () => {
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names.filter((entry) => entry.endsWith(".json"))) {
      const claim = JSON.parse(await readFile(join(folder, name), "utf8").catch(() => "{}")) as { pid?: number };
      if ((claim.pid ?? 0) > 0) return true;
    }
    return false;
  };
  await waitUntil(claimed, "a wake hook claiming the session", { timeoutMs });
}

/**
 * Sends `prompt` to the session and resolves with the link in the model's reply that
 * ends the turn (Claude Code's `result` event: what the person reads).
 * @param opener the tool whose result names the link: `open_reader` (default) or `open_app`.
 * @throws (an assertion) when the turn ran no `opener`, it failed, or the reply carries no link.
 */
export async function openFromReply(
  session: ClaudeSession,
  model: ModelServer,
  prompt: string,
  opener: "open_reader" | "open_app" = "open_reader",
): Promise<string> {
  const from = session.events.length;
  const turnsBefore = model.turns().length;
  session.send(prompt);
  const result = await session.waitForEvent((event: StreamEvent) => event.type === "result", { from, timeoutMs: 120_000 });
  const opened = model
    .turns()
    .slice(turnsBefore)
    .find((turn) => turn.result(pluginTool(opener)) !== undefined);
  assert.ok(
    opened && !opened.result(pluginTool(opener))!.isError,
    `${opener} ran: ${
      opened?.result(pluginTool(opener))?.text ??
      model
        .turns()
        .slice(turnsBefore)
        .map((turn) => turn.lastText)
        .join(" | ")
    }`,
  );
  const link = /http:\/\/127\.0\.0\.1:\d+\/\S+/.exec(String(result.result ?? ""))?.[0];
  assert.ok(link, `the reply the person reads carries the link: ${JSON.stringify(result.result)}`);
  return link;
}
