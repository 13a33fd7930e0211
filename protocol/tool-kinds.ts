/**
 * What each of backchannel's tools answers with, for those who reshape results for the
 * human (Claude Code's PostToolUse hook, claude-code/hook.ts). The one list of it: a new
 * tool that is not named here is left alone by the hook.
 *
 * This module imports nothing, so that the hook starts fast.
 */

/**
 * - `data`: the result carries data the model must read (messages, a document, a
 *   recipe); the human needs only its first line.
 * - `confirmation`: the result only confirms that something was done; one line says it all.
 */
export type ToolKind = "data" | "confirmation";

/** Every tool of backchannel's servers, by name, with its kind. */
export const TOOL_KINDS: Readonly<Record<string, ToolKind>> = Object.freeze({
  /** Messages from the app (questions, `ready`), as one JSON line each. */
  poll_agent_messages: "data",
  /** App only: messages from the agent. */
  poll_ui_messages: "data",
  /** The channel id and the watcher command the agent must run next. */
  open_reader: "data",
  /** App only: the reader's document and threads. */
  reader_state: "data",
  /** The list of recipes, or one recipe's text. */
  read_recipe: "data",
  /** The channel id and the watcher command of an agent-written app, or the saved apps. */
  open_app: "data",
  /** App only: the app's title and HTML. */
  app_state: "data",
  /** App only: the link that shows a channel in a browser tab. */
  browser_link: "data",
  /** The seq of the event sent to the app. */
  notify_ui: "confirmation",
  /** App only: the seq of the event sent to the agent. */
  notify_agent: "confirmation",
  /** App only: whether a thread message was stored. */
  reader_record: "confirmation",
  /** That the session's wall is up. */
  post_wall: "confirmation",
  /** That the app was saved, and its name. */
  save_app: "confirmation",
});

/** The kind of the tool named `name`, or `undefined` when it is not one of backchannel's. */
export function toolKind(name: string): ToolKind | undefined {
  return Object.hasOwn(TOOL_KINDS, name) ? TOOL_KINDS[name] : undefined;
}
