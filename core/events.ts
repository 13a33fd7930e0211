/**
 * What the app's events mean to the signals that tell the agent and the human that
 * something waits (the tool description, Claude Code channel pushes, the status line,
 * the session watcher). The queue itself treats every event alike.
 */

/** The event by which an app asks the agent a question (the reader's `ask`). */
export const ASK_EVENT = "ask";

/** The app a session records for the reader's channels (store/session-record.ts); every other channel is `channel`. */
export const READER_APP = "reader";

/**
 * Events the reader sends about itself (its `ready` on every load) rather than for the
 * agent to act on. They wait in the queue like any other, but never ring: a reader
 * reloading must not wake the agent, whose document the server already holds.
 */
export const QUIET_EVENTS: ReadonlySet<string> = new Set(["ready"]);

/**
 * True when a message with `event` should tell the agent or the human that something
 * waits. `app`: the app of its channel as the session records it; an agent-written
 * app's (anything but {@link READER_APP}) every event rings, `ready` too, because it
 * asks the agent for the app's data on every load (recipe custom-apps). Unknown
 * (`undefined`, the default): as the reader.
 */
export function ringsDoorbell(event: string, app: string = READER_APP): boolean {
  return app !== READER_APP || !QUIET_EVENTS.has(event);
}
