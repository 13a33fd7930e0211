/**
 * The real FileStore, subclassed only to report when a poll starts and stops waiting:
 * nothing else shows from outside whether a server still waits (a poll of the app sends
 * no progress). For in-process servers in tests.
 */
import type { QueueName } from "../../core/paths.js";
import { FileStore } from "../../store/file/file-store.js";
import type { PollOptions, PollResult } from "../../store/store.js";

/** A FileStore that reports each wait of `poll`: when it begins and when the poll returns. */
export class ObservedStore extends FileStore {
  private readonly waits = new Map<string, { began: Promise<void>; ended: Promise<number> }>();
  private readonly openers = new Map<string, { begin: () => void; end: (ms: number) => void }>();

  /** The wait of the next poll on `channelId`: resolves `began` once it waits, `ended` with how long it waited. */
  watch(channelId: string): { began: Promise<void>; ended: Promise<number> } {
    let begin!: () => void;
    let end!: (ms: number) => void;
    const wait = { began: new Promise<void>((resolve) => (begin = resolve)), ended: new Promise<number>((resolve) => (end = resolve)) };
    this.waits.set(channelId, wait);
    this.openers.set(channelId, { begin, end });
    return wait;
  }

  override async poll(channelId: string, queue: QueueName, options: PollOptions = {}): Promise<PollResult> {
    const opener = this.openers.get(channelId);
    let waitingSince: number | undefined;
    const onWaiting = () => {
      waitingSince = performance.now();
      options.onWaiting?.();
      opener?.begin();
    };
    try {
      return await super.poll(channelId, queue, { ...options, onWaiting });
    } finally {
      if (opener && waitingSince !== undefined) {
        this.openers.delete(channelId);
        opener.end(performance.now() - waitingSince);
      }
    }
  }
}
