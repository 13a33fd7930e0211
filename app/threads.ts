/**
 * A thread card: the conversation about one passage, shown in the margin beside it (or
 * under its paragraph on narrow screens). User text only ever becomes `textContent`;
 * agent text is markdown rendered with raw HTML off.
 */
import type { HistoryEntry, ReaderThread, ThreadRole } from "../protocol/reader.js";
import { markdown } from "./document.js";

/** What a card asks of the reader. */
export interface ThreadCardCallbacks {
  /** The user submitted `question` in this card. */
  onask(card: ThreadCard, question: string): void;
  /** The user closed a card that holds no message yet. */
  ondiscard(card: ThreadCard): void;
}

/** One thread's card. */
export class ThreadCard {
  /** The card's element; the reader places it. */
  readonly element: HTMLElement;
  /** The thread, kept up to date as messages are added. */
  readonly thread: ReaderThread;
  private readonly log: HTMLElement;
  private readonly note: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly button: HTMLButtonElement;

  constructor(thread: ReaderThread, callbacks: ThreadCardCallbacks) {
    this.thread = thread;
    this.element = document.createElement("section");
    this.element.className = "card";
    this.element.dataset.thread = thread.thread_id;
    this.element.setAttribute("aria-label", "Thread about a passage");

    const quote = document.createElement("blockquote");
    quote.className = "card-quote";
    quote.textContent = thread.quote;
    this.log = document.createElement("div");
    this.log.className = "card-log";
    this.log.setAttribute("aria-live", "polite");
    this.note = document.createElement("p");
    this.note.className = "card-note";
    this.note.hidden = true;

    // A div, not a <form>: hosts sandbox the iframe, often without allow-forms, and
    // the browser then refuses every submit event.
    const form = document.createElement("div");
    form.className = "card-form";
    this.input = document.createElement("textarea");
    this.input.rows = 2;
    this.input.setAttribute("aria-label", "Your question about this passage");
    this.button = document.createElement("button");
    this.button.type = "button";
    this.button.className = "card-send";
    const close = document.createElement("button");
    close.type = "button";
    close.className = "card-close";
    close.textContent = "Cancel";
    close.addEventListener("click", () => callbacks.ondiscard(this));
    form.append(this.input, this.button, close);
    const submit = () => {
      const question = this.input.value.trim();
      if (question === "") return;
      this.input.value = "";
      callbacks.onask(this, question);
    };
    this.button.addEventListener("click", submit);
    // Enter sends, Shift+Enter starts a new line, Escape closes an empty card.
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      } else if (event.key === "Escape" && this.thread.messages.length === 0) {
        callbacks.ondiscard(this);
      }
    });

    this.element.append(quote, this.log, this.note, form);
    for (const message of thread.messages) this.renderMessage(message.role, message.text);
    this.refresh();
  }

  /** The thread's turns so far, as `ask.history` carries them. */
  history(): HistoryEntry[] {
    return this.thread.messages.map(({ role, text }) => ({ role, text }));
  }

  /** True when the thread already holds a message with this id. */
  has(id: string): boolean {
    return this.thread.messages.some((message) => message.id === id);
  }

  /** Adds a message (ignored when its id is already there). */
  add(id: string, role: ThreadRole, text: string): void {
    if (this.has(id)) return;
    this.thread.messages.push({ id, role, text, ts: new Date().toISOString() });
    this.renderMessage(role, text);
    this.refresh();
  }

  /** Shows that the card waits for the agent (`true`), or stops showing it. */
  setWaiting(waiting: boolean): void {
    this.element.classList.toggle("waiting", waiting);
    this.showNote(waiting ? "Waiting for the agent…" : null);
  }

  /** Shows an error under the messages, and puts `question` back into the input so it can be sent again. */
  setError(message: string, question?: string): void {
    this.element.classList.remove("waiting");
    this.showNote(message, true);
    if (question !== undefined && this.input.value === "") this.input.value = question;
  }

  /** Moves keyboard focus to the question input. */
  focus(): void {
    this.input.focus({ preventScroll: true });
  }

  private showNote(text: string | null, isError = false): void {
    this.note.hidden = text === null;
    this.note.textContent = text ?? "";
    this.note.classList.toggle("error", isError);
  }

  private renderMessage(role: ThreadRole, text: string): void {
    const item = document.createElement("div");
    item.className = `message ${role}`;
    if (role === "agent") {
      // markdown-it escapes all source HTML (html: false), so its output is safe to insert.
      item.innerHTML = markdown.render(text);
    } else {
      item.textContent = text;
    }
    this.log.append(item);
  }

  private refresh(): void {
    const asked = this.thread.messages.length > 0;
    this.button.textContent = asked ? "Follow up" : "Ask";
    this.input.placeholder = asked ? "Ask a follow-up…" : "What would you like to know about this passage?";
    this.element.querySelector<HTMLButtonElement>(".card-close")!.hidden = asked;
  }
}
