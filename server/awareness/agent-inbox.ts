/**
 * What waits for the agent on the channels one server process uses: the agent queue of
 * every channel it opened or polled, watched in the background. It only looks (peek),
 * never takes or acknowledges a message, so the queue stays the truth and every
 * signal built on the inbox is a doorbell followed by a pull.
 */
import type { QueueMessage } from "../../protocol/message.js";
import { changes } from "../../store/changes.js";
import type { ChannelStore } from "../../store/store.js";
import { warnOnStderr } from "../../core/warn.js";

/** Called with the channel whose waiting messages changed, and those messages. */
export type InboxListener = (channelId: string, messages: readonly QueueMessage[]) => void;

/** Options of {@link AgentInbox}. */
export interface AgentInboxOptions {
  /** How often a watched queue is re-read when no file-system event came. Default 5,000 ms. */
  fallbackMs?: number;
  /** Most channels watched at once; the one watched longest is dropped first. Default 32. */
  maxChannels?: number;
  /** Where a failed read is reported. Default: one line on stderr. */
  warn?: (message: string) => void;
}

interface Watched {
  stop: AbortController;
  /** The epoch and seqs last seen, joined: a cheap identity of the waiting messages. */
  seen: string;
  messages: readonly QueueMessage[];
}

/** The agent queues of a set of channels, each watched until {@link close}. */
export class AgentInbox {
  private readonly watched = new Map<string, Watched>();
  private readonly listeners = new Set<InboxListener>();
  private readonly fallbackMs: number;
  private readonly maxChannels: number;
  private readonly warn: (message: string) => void;
  private closed = false;

  constructor(
    private readonly store: ChannelStore,
    options: AgentInboxOptions = {},
  ) {
    this.fallbackMs = options.fallbackMs ?? 5000;
    this.maxChannels = options.maxChannels ?? 32;
    this.warn = options.warn ?? warnOnStderr;
  }

  /** Calls `listener` after every change of what waits on a watched channel. Returns a function that removes it. */
  onChange(listener: InboxListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** What waits on every watched channel, as last read. */
  snapshot(): ReadonlyMap<string, readonly QueueMessage[]> {
    return new Map([...this.watched].map(([id, entry]) => [id, entry.messages]));
  }

  /**
   * Watches `channelId` from now on, with a first read; nothing when it is watched already.
   * @throws InvalidChannelIdError.
   */
  async watch(channelId: string): Promise<void> {
    if (this.closed || this.watched.has(channelId)) return;
    if (this.watched.size >= this.maxChannels) this.unwatch(this.watched.keys().next().value!);
    const entry: Watched = { stop: new AbortController(), seen: "", messages: [] };
    this.watched.set(channelId, entry);
    const wakes = changes(this.store.watchQueue(channelId, "agent"), { fallbackMs: this.fallbackMs, signal: entry.stop.signal });
    // The first read is awaited, so that what waits is known when this returns; the
    // rest of the loop re-reads on every change until the watch stops.
    await wakes.next();
    await this.check(channelId, entry);
    void (async () => {
      for await (const _ of wakes) await this.check(channelId, entry);
    })();
  }

  /**
   * Reads a watched channel again now, so that a caller that just changed its queue (a
   * poll that took messages) is reflected at once rather than at the next file-system
   * event. Nothing for a channel not watched.
   */
  async refresh(channelId: string): Promise<void> {
    const entry = this.watched.get(channelId);
    if (entry) await this.check(channelId, entry);
  }

  /** Stops every watch; later calls to {@link watch} do nothing. */
  close(): void {
    this.closed = true;
    for (const channelId of [...this.watched.keys()]) this.unwatch(channelId);
    this.listeners.clear();
  }

  private unwatch(channelId: string): void {
    const entry = this.watched.get(channelId);
    if (!entry) return;
    entry.stop.abort();
    this.watched.delete(channelId);
  }

  private async check(channelId: string, entry: Watched): Promise<void> {
    let messages: QueueMessage[];
    let epoch: string;
    try {
      ({ messages, epoch } = await this.store.snapshot(channelId, "agent"));
    } catch (error) {
      this.warn(`could not read the agent queue of ${channelId}: ${(error as Error).message}`);
      return;
    }
    // The seqs with their epoch: a queue that started again may show the same seqs for other messages.
    const seen = messages.length === 0 ? "" : `${epoch}:${messages.map((message) => message.seq).join(",")}`;
    if (seen === entry.seen || entry.stop.signal.aborted) return;
    entry.seen = seen;
    entry.messages = messages;
    for (const listener of this.listeners) listener(channelId, messages);
  }
}
