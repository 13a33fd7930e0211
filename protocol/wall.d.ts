/**
 * The wall: the agent's status for every app of its host session, shown until `until`.
 * It is not queued: every `poll_ui_messages` result carries it, and the status line
 * shows it.
 */
/** A wall as it is stored and sent. `posted_at` and `until` are ISO-8601 UTC. */
export type Wall = {
  text: string;
  posted_at: string;
  until: string;
};
