/**
 * Tool-description notify: `poll_agent_messages`'s description says what waits, e.g.
 * `… Waiting now: 2 (ask "What does endowed mean…" on ch-…).`, and the client hears
 * `notifications/tools/list_changed` when that changes. Claude Code refreshes its tool
 * list only on that notification, and only because the server advertised
 * `tools.listChanged` (docs/ARCHITECTURE.md, "Hosts"). It tells the model nothing until it looks: a doorbell.
 *
 * Invariants: a notification goes out only when the summary text changed (what waits,
 * not how often the files were touched); changes within the debounce time make one;
 * updating a description writes no file, so it can never wake the inbox again.
 */
import type { RegisteredTool } from "@modelcontextprotocol/server";
import { ASK_EVENT, ringsDoorbell } from "../../core/events.js";
import { DESCRIPTION_QUOTE_CHARS } from "../../core/limits.js";
import { oneLine } from "../../core/text.js";
import type { QueueMessage } from "../../protocol/message.js";
import type { AgentInbox } from "./agent-inbox.js";

/**
 * A one-phrase summary of what waits, e.g. `2 (ask "What does endowed mean…" on ch-1)`,
 * or `""` when nothing that rings waits.
 */
export function waitingSummary(snapshot: ReadonlyMap<string, readonly QueueMessage[]>): string {
  let count = 0;
  let first: { channelId: string; message: QueueMessage } | undefined;
  for (const [channelId, messages] of snapshot) {
    for (const message of messages) {
      if (!ringsDoorbell(message.event)) continue;
      count += 1;
      first ??= { channelId, message };
    }
  }
  if (!first) return "";
  return `${count} (${describeMessage(first.message)} on ${first.channelId})`;
}

/** `ask "question…"` for a question, else the event name. */
function describeMessage(message: QueueMessage): string {
  const question = (message.data as { question?: unknown } | null)?.question;
  if (message.event !== ASK_EVENT || typeof question !== "string") return message.event;
  return `${ASK_EVENT} ${JSON.stringify(oneLine(question, DESCRIPTION_QUOTE_CHARS))}`;
}

/** Keeps `tool`'s description in step with what waits in `inbox`. */
export class WaitingDescription {
  private summary = "";
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly stopListening: () => void;

  /**
   * @param base the tool's own description, to which the summary is added.
   * @param debounceMs changes within this time make one update. Default 100 ms.
   */
  constructor(
    private readonly tool: RegisteredTool,
    private readonly base: string,
    private readonly inbox: AgentInbox,
    private readonly debounceMs = 100,
  ) {
    this.stopListening = inbox.onChange(() => this.schedule());
  }

  /** Stops following the inbox. */
  close(): void {
    this.stopListening();
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const summary = waitingSummary(this.inbox.snapshot());
      if (summary === this.summary) return;
      this.summary = summary;
      // update() sends notifications/tools/list_changed when a client is connected.
      this.tool.update({ description: summary ? `${this.base} Waiting now: ${summary}.` : this.base });
    }, this.debounceMs);
    this.timer.unref();
  }
}
