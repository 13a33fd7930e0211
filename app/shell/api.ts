/**
 * `backchannel`, the global an agent-written app talks to the agent through: a thin
 * face on the shell's {@link AppChannel}. It hands the app the channel's data as
 * parsed JSON values, never as code; what the app does with them is the app's code.
 */
import type { AppChannel, ChannelMessage, ChannelState, ChannelWall } from "../channel.js";

/** What an app's scripts see as `backchannel`. */
export interface Backchannel {
  /** The channel this app talks on. */
  readonly channelId: string;
  /** `connecting`, `live`, `retrying` or `stopped`. */
  readonly state: ChannelState;
  /** The agent's current status line for the user (the session's wall), or null. */
  readonly wall: ChannelWall | null;
  /** Calls `handler(data, message)` for every message with this `event` from the agent (`"*"`: every message). Returns a function that removes it. */
  on(event: string, handler: (data: unknown, message: ChannelMessage) => void): () => void;
  /** Sends `event` with `data` (default `{}`) to the agent. Resolves with its seq; rejects with the reason when it was refused. */
  send(event: string, data?: unknown): Promise<number>;
  /** Called when {@link state} changes. */
  onstatechange: ((state: ChannelState) => void) | null;
  /** Called when {@link wall} changes. */
  onwall: ((wall: ChannelWall | null) => void) | null;
  /**
   * Called when messages from the agent were deleted before this app read them: it was
   * away for minutes while another copy of it (a browser tab, another screen) read the
   * channel. Reload what the app shows from wherever it keeps it, or ask the agent.
   */
  onmissed: (() => void) | null;
}

/** Hooks of {@link createBackchannel}. */
export interface BackchannelHooks {
  /** Called with whatever the app's handlers throw. */
  onerror(error: unknown): void;
  /** The wall changed (after the app's own `onwall`). */
  onwall(wall: ChannelWall | null): void;
  /** The state changed (after the app's own `onstatechange`). */
  onstatechange(state: ChannelState): void;
}

/** The `backchannel` of `channel`. It takes over the channel's `onwall` and `onstatechange`. */
export function createBackchannel(channel: AppChannel, channelId: string, hooks: BackchannelHooks): Backchannel {
  let wall: ChannelWall | null = null;
  const guarded =
    <T extends unknown[]>(call: (...args: T) => void) =>
    (...args: T) => {
      try {
        call(...args);
      } catch (error) {
        hooks.onerror(error);
      }
    };
  const api: Backchannel = {
    channelId,
    get state() {
      return channel.state;
    },
    get wall() {
      return wall;
    },
    on(event, handler) {
      if (typeof handler !== "function") throw new TypeError("backchannel.on(event, handler): handler must be a function");
      return channel.on(String(event), guarded(handler));
    },
    send(event, data = {}) {
      return channel.send(String(event), data);
    },
    onstatechange: null,
    onwall: null,
    onmissed: null,
  };
  channel.onmissed = () => {
    if (api.onmissed) guarded(api.onmissed)();
    else console.warn("backchannel: messages from the agent were read by another copy of this app while this one was away");
  };
  channel.onwall = (next) => {
    wall = next;
    if (api.onwall) guarded(api.onwall)(next);
    hooks.onwall(next);
  };
  channel.onstatechange = (state) => {
    if (api.onstatechange) guarded(api.onstatechange)(state);
    hooks.onstatechange(state);
  };
  return api;
}
