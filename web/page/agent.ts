/**
 * The playground's agent panel: a person plays the agent. It reads the channel's agent
 * queue with `poll_agent_messages` (long-poll, with a cursor), greets a reader that
 * says `ready` with `hello`, lists every `ask`, and sends what the person types as
 * `answer` through `notify_ui` — exactly the calls a model makes. It shows the chat's
 * messages too, as a model would see them. It never takes the keyboard focus: a
 * person typing in the reader keeps typing there.
 *
 * A page reload starts a new panel: it first lists the questions the channel's threads
 * still wait on (their last message is the person's, from `readState`), so that they
 * stay answerable, and shows one entry per thread (a later ask of a thread replaces
 * its entry). Answers show rendered as the reader renders them (markdown, raw HTML off).
 */
import type { Client, CallToolResult } from "@modelcontextprotocol/client";
import { markdown } from "../../app/markdown-pieces.js";
import type { QueueMessage } from "../../protocol/message.js";
import type { AskData, ReaderThread } from "../../protocol/reader.js";

/** A running agent panel. */
export interface AgentPanel {
  /** Shows a message the person sent in the chat. */
  chat(text: string): void;
  /** Stops reading the channel (after the poll in flight). */
  stop(): void;
}

/**
 * Starts the panel on `channelId`: lists the questions its threads wait on (`readThreads`
 * reads them, as the reader restores itself), then runs the receive loop; errors go to
 * `onerror`, and the loop retries.
 */
export function startAgentPanel(
  client: Client,
  channelId: string,
  readThreads: () => Promise<ReaderThread[]>,
  onerror: (error: Error) => void,
): AgentPanel {
  const inbox = document.getElementById("inbox")!;
  inbox.replaceChildren();
  let stopped = false;
  /**
   * The latest question of each thread seen so far, by thread id: its place in the thread
   * (how many messages came before it) and its entry (none for one answered before a reload).
   */
  const latest = new Map<string, { turn: number; item?: HTMLElement }>();
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: { channel_id: channelId, ...args } })) as CallToolResult;
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown>;
  };

  const statusForm = document.getElementById("status-form") as HTMLFormElement;
  statusForm.onsubmit = (event) => {
    event.preventDefault();
    const input = document.getElementById("status") as HTMLInputElement;
    void call("notify_ui", { event: "status", data: { text: input.value } }).catch(onerror);
  };

  const showAsk = (ask: Omit<AskData, "paragraph">) => {
    const shown = latest.get(ask.thread_id);
    const turn = (ask.omitted ?? 0) + ask.history.length;
    // After a reload the queue holds again the asks the threads listed already, and those answered then.
    if (shown && turn <= shown.turn) return;
    const item = document.createElement("li");
    item.className = "ask waiting";
    const quote = document.createElement("blockquote");
    quote.textContent = ask.quote;
    const history = document.createElement("div");
    history.className = "history";
    const omitted = ask.omitted ? `(${ask.omitted} earlier turns left out or cut short)\n` : "";
    history.textContent = omitted + ask.history.map((turn) => `${turn.role}: ${turn.text}`).join("\n");
    const question = document.createElement("div");
    question.className = "question";
    question.textContent = ask.question;
    const form = document.createElement("form");
    const answer = document.createElement("textarea");
    answer.rows = 3;
    answer.placeholder = "Your answer (markdown)";
    answer.setAttribute("aria-label", `Answer to: ${ask.question}`);
    const send = document.createElement("button");
    send.type = "submit";
    send.textContent = "Send answer";
    form.append(answer, send);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (answer.value.trim() === "") return;
      send.disabled = true;
      call("notify_ui", { event: "answer", data: { thread_id: ask.thread_id, text: answer.value } }).then(
        () => {
          const answered = document.createElement("div");
          answered.className = "answered";
          // markdown-it escapes all source HTML (html: false), so its output is safe to insert.
          answered.innerHTML = markdown.render(answer.value);
          form.replaceWith(Object.assign(document.createElement("div"), { className: "event", textContent: "You answered:" }), answered);
          item.classList.remove("waiting");
        },
        (error: Error) => {
          send.disabled = false;
          onerror(error);
        },
      );
    });
    item.append(quote, history, question, form);
    if (shown?.item) shown.item.replaceWith(item);
    else inbox.prepend(item);
    latest.set(ask.thread_id, { turn, item });
    // Take the focus only from inside the panel: a person typing in the reader keeps typing there.
    if (document.getElementById("agent")!.contains(document.activeElement)) answer.focus();
  };

  const showEvent = (text: string) => inbox.prepend(Object.assign(document.createElement("li"), { className: "event", textContent: text }));

  void (async () => {
    try {
      const threads = await readThreads();
      for (const thread of threads) {
        const last = thread.messages.at(-1);
        if (!last || stopped) continue;
        if (last.role !== "user") {
          latest.set(thread.thread_id, { turn: thread.messages.length - 1 });
          continue;
        }
        const history = thread.messages.slice(0, -1).map(({ role, text }) => ({ role, text }));
        showAsk({ thread_id: thread.thread_id, quote: thread.quote, question: last.text, history });
      }
    } catch (error) {
      onerror(error as Error);
    }
    let cursor = 0;
    // The cursor's epoch: a queue that started again (protocol/epoch.ts) begins its seqs anew.
    let epoch: string | undefined;
    for (let failures = 0; !stopped; ) {
      try {
        const result = await call("poll_agent_messages", { after: cursor, ...(epoch === undefined ? {} : { epoch }), wait_ms: 25_000 });
        if (stopped) break;
        failures = 0;
        if (epoch !== undefined && result.epoch !== epoch) cursor = 0;
        epoch = typeof result.epoch === "string" ? result.epoch : undefined;
        for (const message of result.messages as QueueMessage[]) {
          if (message.seq <= cursor) continue;
          cursor = message.seq;
          if (message.event === "ask") showAsk(message.data as unknown as AskData);
          else if (message.event === "ready") {
            showEvent("The reader is ready; said hello.");
            await call("notify_ui", { event: "hello", data: {} });
          } else showEvent(`${message.event}: ${JSON.stringify(message.data)}`);
        }
      } catch (error) {
        onerror(error as Error);
        failures += 1;
        await new Promise((resolve) => setTimeout(resolve, Math.min(15_000, 500 * 2 ** failures)));
      }
    }
  })();

  return {
    chat: (text) => showEvent(`The person wrote in the chat: ${text}`),
    stop: () => {
      stopped = true;
    },
  };
}
