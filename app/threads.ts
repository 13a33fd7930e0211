/**
 * A thread card: the conversation about one passage, shown in the margin beside it (or
 * under its paragraph on narrow screens). User text only ever becomes `textContent`;
 * agent text is markdown rendered with raw HTML off.
 *
 * A card's height is bounded whatever the conversation: only the latest turns show (the
 * rest behind "Show earlier messages"), a long answer is capped with "Show more", and
 * the card can be collapsed to its quote or closed (its highlight opens it again). An
 * answer cut short (capped, or in a compact card) is cut between two of its lines,
 * never through one (./line-clip.ts), and says so with its "Show more" button.
 */
import type { HistoryEntry, ReaderThread, ThreadMessage, ThreadRole } from "../protocol/reader.js";
import { makeScrollablesFocusable, markdown } from "./document.js";
import { lineHeightOf, wholeLineCut } from "./line-clip.js";
import { elapsed } from "./wording.js";

/** Messages shown before "Show earlier messages": the last two exchanges. */
const VISIBLE_MESSAGES = 4;
/** Answers longer than this (in characters) are capped with "Show more". */
const CAP_CHARS = 700;
/** A capped answer shows at most this many lines of its text. */
const CAPPED_LINES = 9;
/** A compact card (not in use) shows at most this many lines of an answer. */
const COMPACT_LINES = 2;
/** Characters of the quote in the card's accessible name. */
const NAME_CHARS = 60;

/** What a card asks of the reader. */
export interface ThreadCardCallbacks {
  /** The user submitted `question` in this card. */
  onask(card: ThreadCard, question: string): void;
  /** The user closed the card: discard it when it holds no message yet, else hide it. */
  onclose(card: ThreadCard): void;
  /** The user pressed Escape in a card that holds messages: back to its passage. */
  onleave(card: ThreadCard): void;
  /** The question typed so far changed (it is not sent). */
  ondraft(card: ThreadCard, text: string): void;
}

/** An answer in a card, and how much of it shows. */
interface AnswerView {
  /** The box that is cut short. */
  content: HTMLElement;
  /** The rendered markdown inside it, at its natural height. */
  body: HTMLElement;
  /** "Show more" / "Show less", made the first time the answer is cut short. */
  more?: HTMLButtonElement;
  /** Longer than {@link CAP_CHARS}: capped until the person asks for the rest. */
  long: boolean;
  /** The person asked for the whole answer. */
  whole: boolean;
}

/** One thread's card. */
export class ThreadCard {
  /** The card's element; the reader places it. */
  readonly element: HTMLElement;
  /** The thread, kept up to date as messages are added. */
  readonly thread: ReaderThread;
  /** When the card started waiting for an answer (`Date.now()`), or undefined. */
  waitingSince: number | undefined;
  private readonly body: HTMLElement;
  private readonly log: HTMLElement;
  private readonly earlier: HTMLButtonElement;
  private readonly trimmed: HTMLElement;
  private readonly note: HTMLElement;
  private readonly state: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly button: HTMLButtonElement;
  private readonly cancel: HTMLButtonElement;
  private readonly toggle: HTMLButtonElement;
  private showAll = false;
  private answerCount = 0;
  private waitTimer: ReturnType<typeof setInterval> | undefined;
  private extra = "";
  /** The answers rendered in the log, by their message element. */
  private readonly answers = new Map<HTMLElement, AnswerView>();
  /** Cuts the answers again when their text reflows (a new width, fonts, a card shown again). */
  private readonly reflow = new ResizeObserver(() => this.fitAnswers());

  constructor(thread: ReaderThread, callbacks: ThreadCardCallbacks) {
    this.thread = thread;
    const id = `card-${thread.thread_id}`;
    this.element = document.createElement("section");
    this.element.className = "card";
    this.element.dataset.thread = thread.thread_id;
    const short = thread.quote.length > NAME_CHARS ? `${thread.quote.slice(0, NAME_CHARS)}…` : thread.quote;
    this.element.setAttribute("aria-label", `Thread about “${short}”`);

    const head = document.createElement("div");
    head.className = "card-head";
    const quote = document.createElement("blockquote");
    quote.className = "card-quote";
    quote.textContent = thread.quote;
    this.toggle = button("card-toggle", "Collapse");
    this.toggle.setAttribute("aria-expanded", "true");
    this.toggle.setAttribute("aria-controls", `${id}-body`);
    this.toggle.addEventListener("click", () => this.setCollapsed(!this.collapsed));
    this.pressWithoutFocus(this.toggle);
    const close = button("card-close", "Close");
    this.pressWithoutFocus(close);
    close.setAttribute("aria-label", "Close this thread");
    close.addEventListener("click", () => callbacks.onclose(this));
    // What the thread waits on, in words a screen reader announces when it changes (the
    // ticking time below is not announced: it would speak every second).
    this.state = document.createElement("p");
    this.state.className = "card-state";
    this.state.setAttribute("role", "status");
    head.append(quote, this.toggle, close);

    this.body = document.createElement("div");
    this.body.className = "card-body";
    this.body.id = `${id}-body`;
    this.earlier = button("card-earlier", "");
    this.earlier.hidden = true;
    this.earlier.addEventListener("click", () => {
      this.showAll = !this.showAll;
      this.refresh();
    });
    this.log = document.createElement("div");
    this.log.className = "card-log";
    this.log.setAttribute("aria-live", "polite");
    this.trimmed = document.createElement("p");
    this.trimmed.className = "card-trimmed";
    this.trimmed.hidden = true;
    this.note = document.createElement("p");
    this.note.className = "card-note";
    this.note.hidden = true;

    // A div, not a <form>: hosts sandbox the iframe, often without allow-forms, and
    // the browser then refuses every submit event.
    const form = document.createElement("div");
    form.className = "card-form";
    this.input = document.createElement("textarea");
    this.input.rows = 2;
    this.input.setAttribute("aria-label", `Your question about “${short}”`);
    this.button = button("card-send", "Ask");
    this.cancel = button("card-cancel", "Cancel");
    this.cancel.addEventListener("click", () => callbacks.onclose(this));
    form.append(this.input, this.button, this.cancel);
    const submit = () => {
      const question = this.input.value.trim();
      if (question === "") return;
      this.input.value = "";
      callbacks.onask(this, question);
    };
    this.button.addEventListener("click", submit);
    this.input.addEventListener("input", () => callbacks.ondraft(this, this.input.value));
    // Enter sends, Shift+Enter starts a new line, Escape closes an empty card or goes back to the passage.
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      } else if (event.key === "Escape") {
        event.preventDefault();
        if (this.thread.messages.length === 0 && this.input.value.trim() === "") callbacks.onclose(this);
        else callbacks.onleave(this);
      }
    });

    this.body.append(this.earlier, this.log, this.trimmed, this.note, form);
    this.element.append(this.state, head, this.body);
    // A card not in use is compact (docs/reader.md, "Cards stay small"): several threads then fit beside their passages.
    this.element.addEventListener("focusin", (event) => {
      // The focus on a compact card's "Show more" (a screen reader's cursor) asks for the answer, as a click does.
      const answer = event.target instanceof HTMLElement && event.target.parentElement ? this.answers.get(event.target.parentElement) : undefined;
      if (answer && event.target === answer.more && this.element.classList.contains("idle")) this.showWhole(answer);
      else this.setIdle(false);
    });
    this.element.addEventListener("click", (event) => {
      // Not when the click ends a selection (of an answer, to copy it), nor on a control of the card.
      const control = event.target instanceof Element && event.target.closest("button, a");
      if (this.element.classList.contains("idle") && !control && document.getSelection()?.isCollapsed !== false) this.focus();
    });
    this.element.addEventListener("focusout", (event) => {
      if (!(event.relatedTarget instanceof Node && this.element.contains(event.relatedTarget))) this.refreshIdle(true);
    });
    for (const message of thread.messages) this.renderMessage(message.role, message.text);
    this.refresh();
  }

  /** The thread's turns so far, as `ask.history` carries them. */
  history(): HistoryEntry[] {
    return this.thread.messages.map(({ role, text }) => ({ role, text }));
  }

  /** The question typed so far. */
  get draft(): string {
    return this.input.value;
  }

  /** Puts a question typed before (a kept draft) into the input, unless something is being typed there. */
  setDraft(text: string): void {
    if (this.input.value === "") this.input.value = text;
    this.refreshIdle();
  }

  /** The id of the thread's last message (what a draft is typed after), or null before any. */
  get lastMessageId(): string | null {
    return this.thread.messages.at(-1)?.id ?? null;
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

  /**
   * Takes in the messages of `stored` (the thread as recorded on the server) that the
   * card lacks, in their stored order; messages only the card has (not recorded yet)
   * stay after them, in their order.
   */
  merge(stored: ThreadMessage[]): void {
    if (stored.every((message) => this.has(message.id))) return;
    const ids = new Set(stored.map((message) => message.id));
    const merged = [...stored, ...this.thread.messages.filter((message) => !ids.has(message.id))];
    this.thread.messages.splice(0, this.thread.messages.length, ...merged.map((message) => ({ ...message })));
    this.log.replaceChildren();
    for (const message of merged) this.renderMessage(message.role, message.text);
    this.refresh();
  }

  /** Removes the message `id` (a question that could not be sent). */
  remove(id: string): void {
    const index = this.thread.messages.findIndex((message) => message.id === id);
    if (index < 0) return;
    this.thread.messages.splice(index, 1);
    this.log.children[index]?.remove();
    this.refresh();
  }

  /** Shows that the card waits for the agent since `since` (`Date.now()`), with the time elapsed; `undefined` stops it. */
  setWaiting(since: number | undefined): void {
    this.waitingSince = since;
    this.extra = "";
    clearInterval(this.waitTimer);
    this.element.classList.toggle("waiting", since !== undefined);
    this.showState();
    if (since === undefined) {
      this.showNote(null);
      return;
    }
    const tick = () => this.showNote(`Waiting for the agent… ${elapsed(Date.now() - since)}${this.extra}`);
    tick();
    this.waitTimer = setInterval(tick, 1000);
  }

  /** Adds `text` after the waiting line (e.g. that the question was also put in the chat). */
  setWaitingExtra(text: string): void {
    this.extra = text;
    if (this.waitingSince !== undefined) this.showNote(`Waiting for the agent… ${elapsed(Date.now() - this.waitingSince)}${text}`);
  }

  /** Shows an error under the messages, and puts `question` back into the input so it can be sent again. */
  setError(message: string, question?: string): void {
    this.setWaiting(undefined);
    this.showNote(message, true);
    if (question !== undefined && this.input.value === "") this.input.value = question;
  }

  /** Says (or stops saying, with `null`) that the agent sees only the latest part of the thread. */
  setTrimmed(text: string | null): void {
    this.trimmed.hidden = text === null;
    this.trimmed.textContent = text ?? "";
  }

  /** True while only the quote shows. */
  get collapsed(): boolean {
    return this.element.classList.contains("collapsed");
  }

  /** Shows only the quote (`true`) or the whole card. */
  setCollapsed(collapsed: boolean): void {
    this.element.classList.toggle("collapsed", collapsed);
    this.body.hidden = collapsed;
    this.toggle.textContent = collapsed ? "Expand" : "Collapse";
    this.toggle.setAttribute("aria-expanded", String(!collapsed));
  }

  /** Moves keyboard focus to the question input, expanding the card. */
  focus(): void {
    this.element.hidden = false;
    this.setIdle(false);
    if (this.collapsed) this.setCollapsed(false);
    this.input.focus({ preventScroll: true });
  }

  /** Stops the card's timers and observers; call when the card goes away. */
  dispose(): void {
    clearInterval(this.waitTimer);
    this.reflow.disconnect();
  }

  /** The line at the top of the card: waiting for an answer, answered, or nothing before the first question. */
  private showState(): void {
    const text = this.waitingSince !== undefined ? "Waiting for an answer" : this.thread.messages.at(-1)?.role === "agent" ? "Answered" : "";
    if (this.state.textContent !== text) this.state.textContent = text;
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
      const content = document.createElement("div");
      content.className = "message-text";
      content.id = `card-${this.thread.thread_id}-answer-${this.answerCount++}`;
      // Where "Show more" on a compact card leaves the focus: on the answer, which a screen reader then reads.
      content.tabIndex = -1;
      const body = document.createElement("div");
      body.className = "message-body";
      // markdown-it escapes all source HTML (html: false), so its output is safe to insert.
      body.innerHTML = markdown.render(text);
      makeScrollablesFocusable(body);
      content.append(body);
      item.append(content);
      this.answers.set(item, { content, body, long: text.length > CAP_CHARS, whole: false });
      this.reflow.observe(body);
    } else {
      item.textContent = text;
    }
    this.log.append(item);
  }

  /** The "Show more" button of `answer`, made the first time it is needed. */
  private moreButton(answer: AnswerView): HTMLButtonElement {
    if (answer.more) return answer.more;
    const more = button("message-more", "Show more");
    more.setAttribute("aria-controls", answer.content.id);
    this.pressWithoutFocus(more);
    more.addEventListener("click", () => {
      if (this.element.classList.contains("idle")) return this.showWhole(answer);
      answer.whole = !answer.whole;
      this.fitAnswers();
    });
    answer.content.after(more);
    answer.more = more;
    return more;
  }

  /**
   * Keeps a press of `control` on a compact card from focusing it: the focus would make
   * the card whole, and the card, grown and placed again, would move the button from
   * under the pointer before the click.
   */
  private pressWithoutFocus(control: HTMLButtonElement): void {
    control.addEventListener("mousedown", (event) => {
      if (this.element.classList.contains("idle")) event.preventDefault();
    });
  }

  /** Shows the whole of `answer`, the card no longer compact, with the focus on the answer. */
  private showWhole(answer: AnswerView): void {
    answer.whole = true;
    this.setIdle(false);
    answer.content.focus({ preventScroll: true });
  }

  /**
   * Cuts each answer short between two lines where it must be (a compact card shows
   * {@link COMPACT_LINES} of it, a long one {@link CAPPED_LINES} until the person asks for
   * the whole), and shows its "Show more" / "Show less" where there is more or less to see.
   */
  private fitAnswers(): void {
    const compact = this.element.classList.contains("idle");
    for (const [item, answer] of this.answers) {
      // Gone from the log (a merge rendered it again, or a question was taken back); the card itself may not be placed yet.
      if (item.parentElement !== this.log) {
        this.answers.delete(item);
        this.reflow.unobserve(answer.body);
        continue;
      }
      const { content } = answer;
      const lines = compact ? COMPACT_LINES : answer.long && !answer.whole ? CAPPED_LINES : undefined;
      // A message the card does not show (an earlier one) has no lines to measure: it is fitted when it shows.
      const cut = lines === undefined || content.getClientRects().length === 0 ? null : wholeLineCut(content, lines * lineHeightOf(content));
      content.style.maxHeight = cut === null ? "" : `${cut}px`;
      content.classList.toggle("cut", cut !== null);
      // "Show less" only where the person made a capped answer whole.
      const offered = cut !== null || (answer.whole && answer.long && !compact);
      if (!offered && !answer.more) continue;
      const more = this.moreButton(answer);
      more.hidden = !offered;
      more.textContent = cut === null ? "Show less" : "Show more";
      more.setAttribute("aria-expanded", String(cut === null));
    }
  }

  /** Makes the card compact (`true`) or whole, and fits its answers to it. */
  private setIdle(idle: boolean): void {
    if (this.element.classList.contains("idle") !== idle) this.element.classList.toggle("idle", idle);
    this.fitAnswers();
  }

  /**
   * Makes the card compact (its passage, the latest exchange cut short, a one-line input) when it holds messages,
   * nothing is typed in it and the focus is elsewhere (`left`: it has just left the card).
   */
  private refreshIdle(left = false): void {
    const away = left || !this.element.contains(document.activeElement);
    this.setIdle(away && this.thread.messages.length > 0 && this.input.value.trim() === "");
  }

  private refresh(): void {
    this.showState();
    const asked = this.thread.messages.length > 0;
    this.button.textContent = asked ? "Follow up" : "Ask";
    this.input.placeholder = asked ? "Ask a follow-up…" : "What would you like to know about this passage?";
    this.cancel.hidden = asked;
    const hidden = this.showAll ? 0 : Math.max(0, this.log.children.length - VISIBLE_MESSAGES);
    [...this.log.children].forEach((child, index) => ((child as HTMLElement).hidden = index < hidden));
    const older = this.log.children.length - VISIBLE_MESSAGES;
    this.earlier.hidden = older <= 0;
    this.earlier.textContent = this.showAll ? "Show only the latest messages" : `Show ${older} earlier message${older === 1 ? "" : "s"}`;
    this.refreshIdle();
  }
}

function button(className: string, text: string): HTMLButtonElement {
  const element = document.createElement("button");
  element.type = "button";
  element.className = className;
  element.textContent = text;
  return element;
}
