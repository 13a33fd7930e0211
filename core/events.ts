/**
 * What the app's events mean to the signals that tell the agent and the human that
 * something waits (the tool description, Claude Code channel pushes, the status line).
 * The queue itself treats every event alike.
 */

/** The event by which an app asks the agent a question (the reader's `ask`). */
export const ASK_EVENT = "ask";

/**
 * Events an app sends about itself (the reader's `ready` on every load) rather than for
 * the agent to act on. They wait in the queue like any other, but never ring: a reader
 * reloading must not wake the agent.
 */
export const QUIET_EVENTS: ReadonlySet<string> = new Set(["ready"]);

/** True when a message with `event` should tell the agent or the human that something waits. */
export function ringsDoorbell(event: string): boolean {
  return !QUIET_EVENTS.has(event);
}
