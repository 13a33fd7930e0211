/**
 * The threads of the open document: their cards and highlights, asking (fitted into the
 * message limit, recorded before it is sent), receiving answers (never dropping one),
 * opening, closing and moving between them, keeping the questions typed but not sent
 * (drafts, saved on the server {@link DRAFT_DELAY_MS} after the last keystroke, so that
 * a reload keeps them), and putting waiting questions into the chat.
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import type { AnswerData, AskBySend, AskData, PassageAnchor, ReaderThread, ThreadDraft } from "../protocol/reader.js";
import { fitAsk } from "../protocol/ask-budget.js";
import { historyDigest } from "../protocol/history-digest.js";
import { type AppChannel, ChannelError } from "./channel.js";
import type { ChatDelivery } from "./chat-delivery.js";
import { chatMessage } from "./chat-message.js";
import { anchorOf, highlight, unhighlight } from "./document.js";
import { type LayoutElements, neighbourCard, placeCards } from "./layout.js";
import type { ReaderServer } from "./reader-server.js";
import { ThreadCard } from "./threads.js";
import { forwardedNote, notSaved, notSent, tooLong, trimmedNote } from "./wording.js";

/** How long after the last keystroke the question typed in a card is saved: typing does not cost a call a key. */
const DRAFT_DELAY_MS = 400;

/** What the thread list tells the rest of the reader. */
export interface ThreadListEvents {
  /** A call reached the server (`true`) or failed to (`false`). */
  onconnection(ok: boolean): void;
  /** Something came from the agent, or the waiting questions changed: presence should look again. */
  onchange(heardAgent: boolean): void;
  /** The focus should go back to the document (a card was discarded). */
  onfocusdocument(): void;
}

/** The threads of one rendered document. */
export class ThreadList {
  /** The channel that carries asks; set once the reader receives. */
  channel: AppChannel | undefined;
  /** The document's title, for messages put into the chat. */
  title = "";
  /** The largest JSON of one message's data the server accepts. */
  maxMessageBytes = 64 * 1024;
  private readonly cards = new Map<string, ThreadCard>();
  /**
   * Threads whose waiting question was put into the chat, with the card's `waitingSince`
   * then: a question asked since (a follow-up) was not.
   */
  private readonly forwarded = new Map<string, number>();
  /**
   * Threads the server's log holds (restored from it, or their question recorded): the
   * server keeps their answers itself when the agent sends them (`notify_ui`), so the
   * reader does not send them back through the host.
   */
  private readonly held = new Set<string>();
  /** Thread ids of answers that came for no known thread, already looked up again. */
  private readonly lookedUp = new Set<string>();
  private blocks: HTMLElement[] = [];
  private layoutFrame = 0;
  /** Drafts typed but not saved yet, by thread id, with their timers. */
  private readonly unsavedDrafts = new Map<string, { card: ThreadCard; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly app: App,
    private readonly server: ReaderServer,
    private readonly elements: LayoutElements & { waitingCount: HTMLElement },
    private readonly events: ThreadListEvents,
  ) {
    new ResizeObserver(() => this.scheduleLayout()).observe(elements.layout);
    // A reader going away saves what was typed since the last save (best effort: the host may be gone too).
    addEventListener("pagehide", () => {
      for (const threadId of [...this.unsavedDrafts.keys()]) this.saveDraft(threadId);
    });
  }

  /** Starts over on a newly rendered document with its stored `threads` and the questions typed in them (`drafts`). */
  reset(blocks: HTMLElement[], threads: ReaderThread[], drafts: ThreadDraft[] = []): void {
    this.blocks = blocks;
    for (const card of this.cards.values()) {
      card.dispose();
      card.element.remove();
    }
    this.cards.clear();
    this.held.clear();
    for (const { timer } of this.unsavedDrafts.values()) clearTimeout(timer);
    this.unsavedDrafts.clear();
    const byPlace = (a: ReaderThread, b: ReaderThread) => a.anchor.block - b.anchor.block || a.anchor.start - b.anchor.start;
    for (const thread of [...threads].sort(byPlace)) this.restore(thread);
    for (const draft of drafts) {
      // A draft typed after an older message than the thread's last is out of date; one for a thread never asked opens its card again.
      const card = this.cards.get(draft.thread_id);
      if (card && card.lastMessageId === draft.after) card.setDraft(draft.text);
      else if (!card && draft.after === null) {
        const { thread_id, quote, paragraph, anchor } = draft;
        this.add({ thread_id, quote, paragraph, anchor, messages: [] }).setDraft(draft.text);
      }
    }
    this.layout();
  }

  /** When each question still waiting was asked (`Date.now()`), leaving out those put into the chat. */
  waiting(): number[] {
    return this.notForwarded().map((card) => card.waitingSince!);
  }

  /** The cards whose question waits and was not put into the chat. */
  private notForwarded(): ThreadCard[] {
    return [...this.cards.values()].filter(
      (card) => card.waitingSince !== undefined && this.forwarded.get(card.thread.thread_id) !== card.waitingSince,
    );
  }

  /** Starts a thread on `range` of `block` (the whole block when null) and focuses its card; an existing thread on the same passage opens instead. */
  start(block: HTMLElement, range: Range | null): void {
    const text = block.textContent ?? "";
    const anchor: PassageAnchor | null = range ? anchorOf(range) : { block: Number(block.dataset.block), start: 0, end: text.length };
    if (!anchor || anchor.end <= anchor.start) return;
    document.getSelection()?.removeAllRanges();
    const same = [...this.cards.values()].find(
      (card) => card.thread.anchor.block === anchor.block && card.thread.anchor.start === anchor.start && card.thread.anchor.end === anchor.end,
    );
    if (same) {
      this.open(same.thread.thread_id);
      return;
    }
    const paragraph = this.blocks[anchor.block]?.textContent ?? text;
    const thread: ReaderThread = { thread_id: `t-${randomId()}`, quote: paragraph.slice(anchor.start, anchor.end), paragraph, anchor, messages: [] };
    const card = this.add(thread);
    this.layout();
    card.focus();
  }

  /** Shows the card of `threadId` (also a closed one) and moves the focus into it. */
  open(threadId: string): void {
    const card = this.cards.get(threadId);
    if (!card) return;
    card.element.hidden = false;
    this.layout();
    card.focus();
    card.element.scrollIntoView({ block: "nearest" });
  }

  /** Opens the thread after (`step` 1) or before (-1) the one that holds the focus, in page order. */
  move(step: 1 | -1): boolean {
    const all = [...this.cards.values()];
    const from = all.find((card) => card.element.contains(document.activeElement));
    const next = neighbourCard(this.elements, all, from, step);
    if (next) this.open(next.thread.thread_id);
    return next !== undefined;
  }

  /**
   * Shows an answer in its card, and records it when the server's log does not hold its
   * thread (the server records the others); an answer for an unknown thread makes the
   * list read the threads again.
   */
  async receive(data: AnswerData, id: string): Promise<void> {
    if (typeof data?.thread_id !== "string" || typeof data.text !== "string") return;
    let card = this.cards.get(data.thread_id);
    const known = card !== undefined;
    if (!card && !this.lookedUp.has(data.thread_id)) {
      // Its question was recorded by a reader that went away just after sending it.
      this.lookedUp.add(data.thread_id);
      const thread = await this.server.readState().then(
        (state) => state.threads.find((candidate) => candidate.thread_id === data.thread_id),
        () => undefined,
      );
      card = this.cards.get(data.thread_id) ?? (thread ? this.restore(thread) : undefined);
    }
    if (!card) {
      console.warn(`backchannel reader: an answer came for thread ${data.thread_id}, which this channel never recorded`);
      card = this.add({
        thread_id: data.thread_id,
        quote: "(a passage this reader no longer has)",
        paragraph: "",
        anchor: { block: 0, start: 0, end: 0 },
        messages: [],
      });
    }
    if (card.has(id)) {
      // A thread restored just now may hold the answer already (the server keeps it): it is placed now, not at the next layout.
      if (!known) {
        this.events.onchange(true);
        this.layout();
      }
      return;
    }
    // An answer this reader did not wait for answers a question asked in another reader of the channel.
    const askedElsewhere = card.waitingSince === undefined;
    card.add(id, "agent", data.text);
    card.setWaiting(undefined);
    if (askedElsewhere) void this.catchUp(card);
    this.forwarded.delete(data.thread_id);
    this.events.onchange(true);
    this.layout();
    if (!this.held.has(data.thread_id)) this.server.record(card.thread, id, "agent", data.text).catch((error) => card.setTrimmed(notSaved(error)));
  }

  /**
   * Reads every thread again and adds what this reader lacks: answers deleted from the
   * channel before it read them (its channel was told so, ./channel.ts `onmissed`), and
   * threads another reader of the channel started meanwhile. The server keeps every
   * answer in its thread (server/reader/reader-state.ts), so nothing shown goes missing.
   */
  async resync(): Promise<void> {
    const state = await this.server.readState().catch((error: unknown) => {
      console.warn("backchannel reader: the threads could not be read again:", error);
      return undefined;
    });
    if (!state) return;
    let answered = false;
    for (const thread of state.threads) {
      const card = this.cards.get(thread.thread_id);
      if (!card) {
        this.restore(thread);
        continue;
      }
      card.merge(thread.messages);
      if (thread.messages.at(-1)?.role === "agent" && card.waitingSince !== undefined) {
        card.setWaiting(undefined);
        answered = true;
      }
    }
    this.events.onchange(answered);
    this.layout();
  }

  /**
   * Adds to `card` the messages of its thread that another reader recorded (a follow-up
   * asked there), in their stored order. Reads the whole state: only for answers this
   * reader did not ask for, which two readers open on one channel bring.
   */
  private async catchUp(card: ThreadCard): Promise<void> {
    const stored = await this.server.readState().then(
      (state) => state.threads.find((thread) => thread.thread_id === card.thread.thread_id),
      (error) => console.warn("backchannel reader: the thread's other messages could not be read:", error),
    );
    if (!stored || !this.cards.has(card.thread.thread_id)) return;
    card.merge(stored.messages);
    this.layout();
  }

  /**
   * Puts every question that waits (and was not put there before) into the chat, through
   * the host, whose chat does `delivery` with it (the cards say what happens next).
   * Resolves true when the chat took them or none waited, false when it refused (the
   * cause goes to the console).
   */
  async sendToChat(delivery: ChatDelivery): Promise<boolean> {
    const waiting = this.notForwarded().map((card) => ({ card, since: card.waitingSince }));
    if (waiting.length === 0) return true;
    const questions = waiting.map(({ card }) => ({
      threadId: card.thread.thread_id,
      quote: card.thread.quote,
      question: card.thread.messages.at(-1)?.text ?? "",
    }));
    try {
      const result = await this.app.sendMessage({
        role: "user",
        content: [{ type: "text", text: chatMessage(this.title, this.server.channelId, questions, delivery) }],
      });
      if (result.isError) throw new Error("the host refused the message");
    } catch (error) {
      console.warn("backchannel reader: the question was not put into the chat:", error);
      return false;
    }
    // A card answered (or asked again) meanwhile waits for another question, or none.
    for (const { card, since } of waiting) {
      if (card.waitingSince !== since || since === undefined) continue;
      this.forwarded.set(card.thread.thread_id, since);
      card.setWaitingExtra(forwardedNote(delivery));
    }
    this.events.onchange(false);
    return true;
  }

  /** Saves the question typed in `card` once typing pauses. */
  private draftChanged(card: ThreadCard): void {
    const threadId = card.thread.thread_id;
    clearTimeout(this.unsavedDrafts.get(threadId)?.timer);
    this.unsavedDrafts.set(threadId, { card, timer: setTimeout(() => this.saveDraft(threadId), DRAFT_DELAY_MS) });
  }

  /** Saves the draft of `threadId` now, if it has one not saved yet. */
  private saveDraft(threadId: string): void {
    const unsaved = this.unsavedDrafts.get(threadId);
    if (!unsaved) return;
    clearTimeout(unsaved.timer);
    this.unsavedDrafts.delete(threadId);
    const { thread_id, quote, paragraph, anchor } = unsaved.card.thread;
    const draft = { thread_id, quote, paragraph, anchor, text: unsaved.card.draft, after: unsaved.card.lastMessageId };
    this.server.saveDraft(draft).catch((error) => console.warn("backchannel reader: the question typed so far was not saved:", error));
  }

  /** Drops the draft of `threadId` that was not saved yet (the question is being sent, or its card was discarded). */
  private forgetDraft(threadId: string): void {
    clearTimeout(this.unsavedDrafts.get(threadId)?.timer);
    this.unsavedDrafts.delete(threadId);
  }

  /** Places the cards now, and says in the header how many questions wait for an answer. */
  layout(): void {
    placeCards(this.elements, this.cards.values());
    const waiting = [...this.cards.values()].filter((card) => card.waitingSince !== undefined).length;
    const text = waiting === 0 ? "" : `${waiting} question${waiting === 1 ? "" : "s"} waiting`;
    // Emptied, never hidden: a live region that is hidden and shown again is not announced reliably.
    const count = this.elements.waitingCount;
    if (count.textContent !== text) count.textContent = text;
  }

  private scheduleLayout(): void {
    if (this.layoutFrame !== 0) return;
    this.layoutFrame = requestAnimationFrame(() => {
      this.layoutFrame = 0;
      this.layout();
    });
  }

  /** Shows a stored thread again; a question without an answer yet is still waiting (since it was asked). */
  private restore(thread: ReaderThread): ThreadCard {
    const card = this.add(thread);
    this.held.add(thread.thread_id);
    const last = thread.messages.at(-1);
    if (last?.role === "user") card.setWaiting(Date.parse(last.ts) || Date.now());
    return card;
  }

  /** Creates the card of `thread` and highlights its passage. */
  private add(thread: ReaderThread): ThreadCard {
    const card = new ThreadCard(thread, {
      onask: (target, question) => void this.ask(target, question),
      onclose: (target) => this.close(target),
      onleave: (target) => this.markOf(target.thread.thread_id)?.focus(),
      ondraft: (target) => this.draftChanged(target),
    });
    this.cards.set(thread.thread_id, card);
    const block = this.blocks[thread.anchor.block];
    if (block && thread.anchor.end > thread.anchor.start) highlight(block, thread.anchor.start, thread.anchor.end, thread.thread_id);
    new ResizeObserver(() => this.scheduleLayout()).observe(card.element);
    return card;
  }

  /**
   * Sends `question` in `card`'s thread. It is recorded on the server BEFORE it is sent
   * (both calls leave in this order, in the same task), so a reader closed just after
   * Enter shows the thread again and receives its answer; a send that fails withdraws
   * the record. The ask is fitted into the server's message limit first. A follow-up
   * names the thread's history instead of carrying it (the server holds it), and
   * carries it only when the server's record turns out not to match.
   */
  private async ask(card: ThreadCard, question: string): Promise<void> {
    if (!this.channel) return;
    const { thread } = card;
    const whole: AskData = { thread_id: thread.thread_id, quote: thread.quote, paragraph: thread.paragraph, question, history: card.history() };
    const fitted = fitAsk(whole, this.maxMessageBytes);
    if (!fitted.fits) {
      card.setError(tooLong(fitted.maxQuestionChars), question);
      return;
    }
    const id = `q-${randomId()}`;
    // Recording the question drops the thread's saved draft on the server.
    this.forgetDraft(thread.thread_id);
    const recorded = this.server.record(thread, id, "user", question).then(
      () => {
        this.held.add(thread.thread_id);
        return true;
      },
      (error) => {
        card.setTrimmed(notSaved(error));
        return false;
      },
    );
    const sent = sendAsk(this.channel, whole, fitted.data);
    // The card changes after both calls have left: its rendering and layout are not on the question's way.
    card.add(id, "user", question);
    card.setWaiting(Date.now());
    card.setTrimmed(fitted.omitted > 0 ? trimmedNote(fitted.omitted) : null);
    this.layout();
    try {
      await sent;
      this.events.onconnection(true);
    } catch (error) {
      card.remove(id);
      card.setError(notSent(error), question);
      this.layout();
      if (await recorded) await this.server.record(thread, id, "user", question, true).catch(() => undefined);
      // Withdrawing the thread's only message drops the thread from the server's log.
      if (thread.messages.length === 0) this.held.delete(thread.thread_id);
    }
    this.events.onchange(false);
  }

  /** Closes a card: one that holds no message is discarded with its highlight; any other is hidden until its passage is opened again. */
  private close(card: ThreadCard): void {
    if (card.thread.messages.length > 0) {
      card.element.hidden = true;
      this.markOf(card.thread.thread_id)?.focus();
    } else {
      // A discarded card leaves no draft behind (one may have been saved before its text was cleared).
      this.forgetDraft(card.thread.thread_id);
      const { thread_id, quote, paragraph, anchor } = card.thread;
      this.server
        .saveDraft({ thread_id, quote, paragraph, anchor, text: "", after: null })
        .catch((error) => console.warn("backchannel reader: the discarded question's draft was not dropped:", error));
      unhighlight(this.elements.doc, card.thread.thread_id);
      card.dispose();
      card.element.remove();
      this.cards.delete(card.thread.thread_id);
      this.events.onfocusdocument();
    }
    this.layout();
  }

  private markOf(threadId: string): HTMLElement | null {
    return this.elements.doc.querySelector<HTMLElement>(`mark[data-thread="${CSS.escape(threadId)}"]`);
  }
}

function randomId(): string {
  return [...crypto.getRandomValues(new Uint8Array(6))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Sends a follow-up by reference (protocol/reader.ts, `AskBySend`), the whole `fitted`
 * ask when the server's record of the thread does not hold that history, and a first
 * question as it is. Resolves with the seq of the ask sent.
 */
async function sendAsk(channel: AppChannel, whole: AskData, fitted: AskData): Promise<number> {
  if (whole.history.length === 0) return channel.send("ask", fitted);
  const { history, ...rest } = whole;
  const byRef: AskBySend = { ...rest, history: [], history_ref: { turns: history.length, digest: historyDigest(history) } };
  try {
    return await channel.send("ask", byRef);
  } catch (error) {
    if (!(error instanceof ChannelError && error.code === "HISTORY_MISMATCH")) throw error;
    return channel.send("ask", fitted);
  }
}
