/**
 * The one rule for which errors reach the caller (the model, the app, or a person at a
 * terminal): an error whose message is written for the caller extends
 * {@link CallerError}, carries a stable {@link ErrorCode}, and is shown as it is. Anything
 * else is an internal error: its stack goes to stderr, and the caller gets a generic
 * message (code `INTERNAL`). Callers branch on the code, never on the message's text
 * (docs/ARCHITECTURE.md, "Errors").
 */

/**
 * Every code a caller can see, with what it means: the one definition. A code never
 * changes meaning once released; a new kind of error gets a new code.
 */
export const ERROR_CODES = {
  INVALID_CHANNEL_ID: "a channel id does not match the id pattern",
  INVALID_EVENT: "an event name does not match the event pattern",
  INVALID_APP_NAME: "an app name does not match the app-name pattern",
  INVALID_DATA: "a message's data or a state document is not plain JSON within the nesting limit",
  INVALID_CURSOR: "a poll's cursor (after) is not a whole number >= 0, or its epoch or reader id is not one",
  INVALID_ARGUMENTS: "a tool's arguments contradict each other or say nothing to do",
  INVALID_COMMAND_LINE: "a backchannel command line names an unknown option, lacks an option's value or has a word too many",
  MESSAGE_TOO_LARGE: "a message's data is larger than the per-message limit",
  QUEUE_FULL: "a queue is at its message or byte limit; nothing was added or dropped",
  STATE_TOO_LARGE: "a state document is larger than its limit; the stored one is unchanged",
  PRINCIPAL_LIMIT: "a remote principal is at its channel, append-rate or byte limit",
  WAIT_LIMIT: "too many calls wait at once, of one principal or in the server process; nothing was read",
  CALL_LIMIT: "too many calls are answered at once over HTTP, of one principal or in the server process; nothing was done",
  TOO_MANY_PRINCIPALS: "the store holds data of as many remote principals as it may, and a new one cannot write; nothing was written",
  LOCK_TIMEOUT: "a file of the file store stayed locked by another process for too long",
  LOCK_LOST: "another process broke this process's lock while it stalled; nothing was committed",
  CORRUPT_QUEUE_FILE: "a queue file is not a queue; a writer moves it aside at its next write",
  UNSAFE_LAYOUT: "a folder or file of the data directory is another user's or writable by others",
  NOT_REGULAR_FILE: "something other than a regular file or folder is where one belongs",
  FILE_TOO_LARGE: "a file of the data directory is larger than its kind can be",
  UNSAFE_APPS_FOLDER: "the saved apps' folder is not a real folder",
  STORE_UNAVAILABLE: "the Redis store cannot be reached or stopped answering; nothing was done unless the message says the call was sent",
  STORE_REFUSED: "the Redis store answered a command with an error",
  STORE_FULL: "the Redis store is at its maxmemory and refused a write; reads and acknowledgements still work",
  STORE_NOT_REPLICATED:
    "the Redis store's replicas did not confirm a change in time (it may be lost at a failover), or too few are online to make one (nothing was written)",
  INVALID_STORE_URL: "BACKCHANNEL_STORE (or serve --store) is not a usable Redis URL",
  SAVED_APP_TOO_LARGE: "a saved app is larger than its limit",
  DAMAGED_SAVED_APP: "a saved app's record cannot be read",
  UNKNOWN_APP: "no saved app has that name",
  NO_APP_ON_CHANNEL: "the channel has no app open",
  INVALID_APP: "an app's html is refused",
  CORRUPT_APP_STATE: "the channel's app record cannot be read",
  INVALID_WALL: "a wall's text is refused",
  UNKNOWN_RECIPE: "no recipe has that name",
  NO_DOCUMENT: "the reader was given no document to open",
  DOCUMENT_FILE: "the reader's document file cannot be read",
  CORRUPT_READER_STATE: "the reader's stored state cannot be read",
  HISTORY_MISMATCH: "an ask named a thread history (history_ref) the server's record of the thread does not hold; send the whole history",
  APP_ONLY_TOOL: "an app-only tool was called by a client that shows no apps (it declares no MCP Apps extension)",
  BROWSER_HOST: "the browser host, which shows the reader to a client that shows no apps, could not be started or reached",
  READER_NOT_BUILT: "the reader app was not built",
  SHELL_NOT_BUILT: "the app shell was not built",
  TOKEN_FILE: "the token file of serve --http --auth tokens is unusable",
  INVALID_AUTH_OPTIONS: "the authentication options of serve --http contradict each other or are missing",
  INVALID_PRINCIPAL: "an authenticated request names no usable principal",
  UNSAFE_BIND_ADDRESS: "serve --http would listen beyond loopback without authentication or a public URL",
  SETTINGS_FILE: "a Claude Code settings file (or install's stash beside it) is not what install can change",
  FILE_SYSTEM: "the data directory could not be read or written (full disk, permissions, …)",
  NO_HOME_FOLDER:
    "a default path (the data directory, Claude Code's settings) lies in a home folder this process has none of; set the variable or option the message names",
  INTERNAL: "a bug in backchannel; its stack is on the server's stderr",
} as const;

/** A stable error code (see {@link ERROR_CODES}). */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * An error whose message says what was wrong and what to do, written for whoever made
 * the call. Subclasses set `name` and `code`; a new subclass is shown to callers by
 * being one.
 */
export abstract class CallerError extends Error {
  abstract readonly code: ErrorCode;
}

/** Whether `code` is one of {@link ERROR_CODES}. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}

/**
 * The code of a caller error, read from the value alone: an error thrown by another copy
 * of this package (a store of one's own, another bundle) fails `instanceof` but still
 * carries its code.
 * @returns `undefined` for anything that is not an `Error` with one of {@link ERROR_CODES}.
 */
export function callerErrorCode(error: unknown): ErrorCode | undefined {
  if (!(typeof error === "object" && error !== null && typeof (error as Error).message === "string")) return undefined;
  const code = (error as { code?: unknown }).code;
  return isErrorCode(code) ? code : undefined;
}
