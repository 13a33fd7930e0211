/**
 * The message every queue holds and every poll returns (the agent's `notify_ui` and the
 * app's `notify_agent` alike). The one definition: the store, the tools' output schema,
 * the watcher, the app and the playground all use this type.
 */
import type { JsonValue } from "../core/json.js";
export type { JsonValue } from "../core/json.js";
/**
 * One message of a queue. `seq` is unique in its queue for ever: it starts at 1, grows
 * by one per message and is never reused, not even after the queue drains. `event`
 * matches `EVENT_PATTERN` (core/ids.ts); `ts` is when it was appended, ISO-8601 UTC.
 */
export type QueueMessage = {
  seq: number;
  event: string;
  data: JsonValue;
  ts: string;
};
