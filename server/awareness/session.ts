/**
 * The host session a server process serves (see ../core/session-key.ts): which
 * channels it uses, and its wall. Every process of one Claude Code session computes
 * the same key, so the model's process, the app's process and the status line agree.
 *
 * A channel belongs to the session that last opened or polled it from the model's
 * side. The channel records that key in its own folder (state document `session`), and
 * the session file lists the channel, so that the status line reads one file.
 */
import { WALL_DEFAULT_SECONDS, WALL_MAX_CHARS, WALL_MAX_SECONDS } from "../../core/limits.js";
import { SESSION_KEY_PATTERN } from "../../core/ids.js";
import type { Wall } from "../../protocol/wall.js";
import { changes } from "../../store/changes.js";
import { activeWall, withChannel } from "../../store/session-record.js";
import type { ChannelStore } from "../../store/store.js";
import { CallerError } from "../../core/errors.js";
import { characterCount, oneLine } from "../../core/text.js";

/** The state document in which a channel records its session. */
export const SESSION_STATE = "session";

/** Thrown for a wall the caller must change: too long, or a duration out of range. */
export class InvalidWallError extends CallerError {
  override readonly name = "InvalidWallError";
  override readonly code = "INVALID_WALL";
}

/** One host session, seen from one server process. */
export class Session {
  /** Channels this process has recorded already, with their app; recording again would only rewrite the same files. */
  private readonly recorded = new Map<string, string>();

  /**
   * @param key the session key (from `sessionKey()`).
   * @throws Error when `key` does not match SESSION_KEY_PATTERN.
   */
  constructor(
    readonly key: string,
    private readonly store: ChannelStore,
  ) {
    if (!SESSION_KEY_PATTERN.test(key)) throw new Error(`invalid session key ${JSON.stringify(key)}`);
  }

  /**
   * Records that this session uses `channelId` for `app` (`"reader"`, or `"channel"`
   * for any other app; a channel known as a reader stays one), with the `title` it was
   * opened with (kept from before when none is given).
   * @throws InvalidChannelIdError, LockTimeoutError, I/O errors.
   */
  async addChannel(channelId: string, app: string, title?: string): Promise<void> {
    const known = this.recorded.get(channelId);
    if (title === undefined && (known === app || (known !== undefined && app === "channel"))) return;
    await this.store.updateState(channelId, SESSION_STATE, () => ({ key: this.key }));
    let label = app;
    await this.store.sessions.update(this.key, (record) => {
      // Another process of the session may have recorded it as a reader already.
      const before = record.channels.find((channel) => channel.id === channelId);
      if (before?.app === "reader") label = "reader";
      const named = title ?? before?.title;
      return withChannel(record, named === undefined ? { id: channelId, app: label } : { id: channelId, app: label, title: named });
    });
    this.recorded.set(channelId, label);
  }

  /**
   * Puts up the wall for `seconds` (default 1 hour, at most 3 days), replacing any before.
   * The text is kept as one line without escape sequences or control characters
   * (`oneLine`): it is shown in terminals.
   * @returns the wall.
   * @throws InvalidWallError for empty or too long text or a duration out of range.
   */
  async postWall(text: string, seconds: number = WALL_DEFAULT_SECONDS): Promise<Wall> {
    const line = oneLine(text);
    if (line === "") throw new InvalidWallError("the wall text is empty: pass the status to show, or clear: true to take the wall down");
    const chars = characterCount(line);
    if (chars > WALL_MAX_CHARS) throw new InvalidWallError(`the wall text has ${chars} characters; keep it to ${WALL_MAX_CHARS} (one line)`);
    if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= WALL_MAX_SECONDS)) {
      throw new InvalidWallError(`duration_s must be a whole number of seconds from 1 to ${WALL_MAX_SECONDS} (3 days), not ${seconds}`);
    }
    const now = Date.now();
    const wall: Wall = { text: line, posted_at: new Date(now).toISOString(), until: new Date(now + seconds * 1000).toISOString() };
    await this.store.sessions.update(this.key, (record) => ({ ...record, wall }));
    return wall;
  }

  /** Takes the wall down. @returns whether one was up. */
  async clearWall(): Promise<boolean> {
    let wasUp = false;
    await this.store.sessions.update(this.key, (record) => {
      wasUp = activeWall(record) !== null;
      return { ...record, wall: null };
    });
    return wasUp;
  }

  /** The session key `channelId` records, or `null` for a channel no model-side process has used. */
  async sessionOf(channelId: string): Promise<string | null> {
    const state = (await this.store.readState(channelId, SESSION_STATE)) as { key?: unknown } | null;
    const key = state?.key;
    return typeof key === "string" && SESSION_KEY_PATTERN.test(key) ? key : null;
  }

  /** The wall of session `key` while it lasts, else `null`. */
  async wallOf(key: string): Promise<Wall | null> {
    return activeWall(await this.store.sessions.read(key));
  }

  /**
   * Reads the wall of session `key` and then watches it: `onChange` is called once when
   * the wall differs from the one read (posted, cleared, or expired: re-read at least
   * every `recheckMs`, default 5,000), unless `signal` aborted first.
   * @returns the wall read.
   * @throws I/O errors of that first read (later ones end the watch quietly).
   */
  async followWall(key: string, signal: AbortSignal, onChange: () => void, recheckMs = 5000): Promise<Wall | null> {
    // Subscribed before the read, so that a change right after it still counts.
    const subscription = this.store.sessions.watch(key);
    let before: Wall | null;
    try {
      before = await this.wallOf(key);
    } catch (error) {
      subscription.close();
      throw error;
    }
    const follow = async () => {
      for await (const wake of changes(subscription, { fallbackMs: recheckMs, signal })) {
        if (wake !== "start" && !sameWall(await this.wallOf(key), before)) return onChange();
      }
    };
    // An unreadable session file ends the watch quietly: the wall shows again at the next poll.
    follow().catch(() => undefined);
    return before;
  }
}

function sameWall(a: Wall | null, b: Wall | null): boolean {
  return a?.text === b?.text && a?.until === b?.until;
}
