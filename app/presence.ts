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
 * A connection problem shows as "Reconnecting…" only until any call succeeds again.
 */
/** Options of {@link Presence}. */
export interface PresenceOptions {
  /** A question unanswered this long with nothing ever heard from the agent means no agent is there. Default 5,000 ms. */
  noAgentMs?: number;
  /** A question unanswered this long with nothing heard from the agent since makes presence lapse. Default 30,000 ms. */
  lapseMs?: number;
  /** True when the host can put a message into the chat (`ui/message`). */
  canSendToChat(): boolean;
  /** The person pressed the offer's button. */
  onsendtochat(): void;
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

  constructor(
    private readonly elements: PresenceElements,
    private readonly options: PresenceOptions,
  ) {
    this.noAgentMs = options.noAgentMs ?? 5_000;
    this.lapseMs = options.lapseMs ?? 30_000;
    elements.offerButton.addEventListener("click", () => options.onsendtochat());
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
    const oldest = waiting.length > 0 ? Math.min(...waiting) : undefined;
    const unheard = oldest !== undefined && this.heardAt < oldest;
    const noAgent = unheard && this.helloAt === undefined && now - oldest >= this.noAgentMs;
    const lapsed = unheard && this.helloAt !== undefined && now - oldest >= this.lapseMs;
    if (noAgent || lapsed) {
      const text = noAgent ? "No agent is reading along yet" : "The agent has not answered yet";
      this.show("lapsed", text);
      this.offer(text);
      return;
    }
    this.offer(null);
    if (this.helloAt === undefined) this.show("waiting", "Waiting for the agent");
    else this.show("listening", "Agent is listening");
  }

  private offer(text: string | null): void {
    const { offer, offerText, offerButton } = this.elements;
    if (text === null) {
      offer.hidden = true;
      return;
    }
    const chat = this.options.canSendToChat();
    const wording = chat
      ? `${text}. Put your question into the chat, and the agent answers it here when you send it.`
      : `${text}. Send any message in the chat (for example "answer my question in the reader") to give the agent its turn.`;
    // Only on a change: the offer is a live region.
    if (offerText.textContent !== wording) offerText.textContent = wording;
    offerButton.hidden = !chat;
    offer.hidden = false;
  }

  private show(state: PresenceState, text: string): void {
    const { presence } = this.elements;
    // Only on a change: the element is a live region.
    if (presence.dataset.state === state && presence.textContent === text) return;
    presence.dataset.state = state;
    presence.textContent = text;
  }
}
