/**
 * What the reader says about the agent, honestly, from what the agent does: it says
 * `hello` when it reads the reader's `ready` (an agent that polls), and it answers and
 * sets statuses (every agent, also one woken by a hook that never says hello). So
 * "listening" can only be a claim about the recent past:
 *
 * - before the agent did anything: "Waiting for the agent";
 * - after a `hello`, an answer or a status: "Agent is listening", until a question waits unanswered for
 *   {@link PresenceOptions.lapseMs} with nothing heard from the agent since it was asked;
 * - a question that waits {@link PresenceOptions.noAgentMs} with nothing ever heard from the agent, or
 *   past the lapse, means nothing is waking the agent (a host without background
 *   commands): the reader says so and offers ONE button that puts the waiting
 *   questions into the chat, where the person's send gives the agent its turn.
 *
 * Where the chat sends the app's message as a turn at once (chat-delivery.ts, `"sends"`),
 * that message is the agent's doorbell: such a chat is the only thing that gives its
 * agent a turn, so every question goes there as soon as it waits, without a button and
 * whatever the agent said before. A chat that refuses it (a turn is running) gets it
 * again every {@link RETRY_MS} until it takes it; only questions still unanswered go.
 *
 * A connection problem shows as "Reconnecting…" only until any call succeeds again.
 */
import type { ChatDelivery } from "./chat-delivery.js";

/** Options of {@link Presence}. */
export interface PresenceOptions {
  /** A question unanswered this long with nothing ever heard from the agent means no agent is there. Default 5,000 ms. */
  noAgentMs?: number;
  /** A question unanswered this long with nothing heard from the agent since makes presence lapse. Default 30,000 ms. */
  lapseMs?: number;
  /** What the host's chat does with the app's message. */
  chat(): ChatDelivery;
  /** Puts the waiting questions not put there yet into the chat: resolves true when the chat took them (or none waited). */
  sendToChat(): Promise<boolean>;
  /** The questions still waiting: when each was asked (`Date.now()`), those not yet put in the chat. */
  waiting(): number[];
}

/** The elements presence writes to. */
export interface PresenceElements {
  presence: HTMLElement;
  offer: HTMLElement;
  offerText: HTMLElement;
  offerButton: HTMLButtonElement;
}

type PresenceState = "connecting" | "waiting" | "listening" | "lapsed" | "offline";

/** The presence line and the no-agent offer of one reader. */
export class Presence {
  private readonly noAgentMs: number;
  private readonly lapseMs: number;
  private helloAt: number | undefined;
  private heardAt = 0;
  private offline = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The message being put into the chat, while the host has not answered. */
  private sending: Promise<void> | undefined;
  /** The chat refused the last message ("sends" hosts: a turn is running), so the waiting questions go on the next try. */
  private refused = false;
  /** A refused message is not tried again before this time (`Date.now()`): one try per {@link RETRY_MS}. */
  private retryAt = 0;

  constructor(
    private readonly elements: PresenceElements,
    private readonly options: PresenceOptions,
  ) {
    this.noAgentMs = options.noAgentMs ?? 5_000;
    this.lapseMs = options.lapseMs ?? 30_000;
    elements.offerButton.addEventListener("click", () => this.send());
    this.show("connecting", "Connecting…");
  }

  /** The reader opened a channel: nothing heard yet. Starts the clock that re-checks every second. */
  start(): void {
    this.helloAt = undefined;
    this.heardAt = 0;
    clearInterval(this.timer);
    this.timer = setInterval(() => this.update(), 1000);
    this.update();
  }

  /** The agent said `hello`. */
  hello(): void {
    this.helloAt = Date.now();
    this.heard();
  }

  /** Something came from the agent (an answer, a status): an agent that answers is listening, whether or not it said hello. */
  heard(): void {
    this.heardAt = Date.now();
    this.helloAt ??= this.heardAt;
    this.update();
  }

  /** A call to the server failed (`true`) or succeeded (`false`). */
  setOffline(offline: boolean): void {
    this.offline = offline;
    this.update();
  }

  /** Re-reads the waiting questions and says what is true now. */
  update(): void {
    if (this.offline) {
      this.show("offline", "Reconnecting…");
      return;
    }
    const now = Date.now();
    const waiting = this.options.waiting();
    if (waiting.length === 0) this.refused = false;
    const chat = this.options.chat();
    if (chat === "sends") {
      if (waiting.length > 0 && now >= this.retryAt) this.send();
      this.offer(this.refused ? CHAT_BUSY : null);
      this.showAgent();
      return;
    }
    const oldest = waiting.length > 0 ? Math.min(...waiting) : undefined;
    const unheard = oldest !== undefined && this.heardAt < oldest;
    const noAgent = unheard && this.helloAt === undefined && now - oldest >= this.noAgentMs;
    const lapsed = unheard && this.helloAt !== undefined && now - oldest >= this.lapseMs;
    if (noAgent || lapsed) {
      const situation = noAgent ? "No agent is reading along yet" : "The agent has not answered yet";
      this.show("lapsed", situation);
      if (chat === "none") this.offer(`${situation}. ${NO_CHAT}`);
      else this.offer(this.refused ? CHAT_REFUSED : `${situation}. ${PUT_IN_CHAT}`, true);
      return;
    }
    this.offer(null);
    this.showAgent();
  }

  /** Puts the waiting questions into the chat, unless a message is on its way there; what the chat answered shows at once. */
  private send(): void {
    if (this.sending) return;
    this.sending = this.options.sendToChat().then((took) => {
      this.sending = undefined;
      this.refused = !took;
      this.retryAt = took ? 0 : Date.now() + RETRY_MS;
      this.update();
    });
  }

  /** Shows the offer saying `text`, with the "Ask in the chat" button when `button` (hides it when `text` is null). */
  private offer(text: string | null, button = false): void {
    const { offer, offerText, offerButton } = this.elements;
    if (text === null) {
      offer.hidden = true;
      return;
    }
    // Only on a change: the offer is a live region.
    if (offerText.textContent !== text) offerText.textContent = text;
    offerButton.hidden = !button;
    offer.hidden = false;
  }

  /** Says whether the agent has said `hello`. */
  private showAgent(): void {
    if (this.helloAt === undefined) this.show("waiting", "Waiting for the agent");
    else this.show("listening", "Agent is listening");
  }

  private show(state: PresenceState, text: string): void {
    const { presence } = this.elements;
    // Only on a change: the element is a live region.
    if (presence.dataset.state === state && presence.textContent === text) return;
    presence.dataset.state = state;
    presence.textContent = text;
  }
}

/** How often a chat that refused the app's message is tried again: the clock's tick. */
const RETRY_MS = 1000;

/** Where the chat takes a message from the app for the person to send ("input"): what the button does. */
const PUT_IN_CHAT = "Put your question into the chat, and the agent answers it here when you send it.";

/** Where the chat takes no message from the app: how the person gives the agent its turn. */
const NO_CHAT = 'Send any message in the chat (for example "answer my question in the reader") to give the agent its turn.';

/** The chat did not take the message the person asked for ("input" hosts). */
const CHAT_REFUSED = "The chat did not take the question. Copy it into the chat yourself to give the agent its turn.";

/** A chat that sends the app's message at once refused it: it goes on the next try. */
const CHAT_BUSY = "The chat is busy with another turn. Your question goes to the agent there as soon as the chat is free.";
