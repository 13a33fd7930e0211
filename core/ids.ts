/**
 * Identifier rules shared by the server, the store, the watcher and the app.
 *
 * These are the only definitions of what a channel id and an event name may be.
 * A channel id becomes a folder name, so it is checked here, before any path is
 * built from it (see `channelDir` in ./paths.ts).
 */
import { CallerError } from "./errors.js";

/**
 * The shape of a channel id: 1 to 64 letters, digits, `_` or `-`, not starting with `-`.
 * Nothing that could name a path, and nothing a command line takes for an option (an id
 * stands in the watcher's command). {@link isChannelId} also refuses device names.
 */
export const CHANNEL_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

/**
 * Names Windows reserves for devices, in any case: a file or folder so named cannot be
 * made there, so no channel id or app name (both become file names) may be one.
 */
export const WINDOWS_DEVICE_NAME = /^(?:con|prn|aux|nul|com[1-9]|lpt[1-9])$/i;

/** How {@link CHANNEL_ID_PATTERN} reads in an error message. */
export const CHANNEL_ID_RULE =
  '1 to 64 characters from A-Z, a-z, 0-9, "_" and "-", not starting with "-", and not a Windows device name (CON, NUL, COM1, …)';

/** An event name: 1 to 64 letters, digits, `_`, `.`, `:` or `-`. */
export const EVENT_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A reader id: 8 to 32 letters, digits, `_` or `-`, chosen by an app once per page load
 * to tell its polls of a queue apart from another reader's (store/readers.ts). It names
 * no file: it is kept inside a queue's records.
 */
export const READER_ID_PATTERN = /^[A-Za-z0-9_-]{8,32}$/;

/** The name of a per-channel state document: lower-case letters, digits and `-`, starting with a letter. */
export const STATE_NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * A session key: `claude-<pid>-<digest>` (the Claude Code process every process of the
 * session knows) or `pid-<pid>-<digest>` (the parent, outside Claude Code), the digest
 * telling that process apart from every other with its pid (core/session-key.ts). It
 * names a file, so it is checked before any path is built from it.
 */
export const SESSION_KEY_PATTERN = /^(claude|pid)-[0-9]{1,10}-[0-9a-f]{20}$/;

/** Thrown when a string is not a valid channel id; the message says what a valid one looks like. */
export class InvalidChannelIdError extends CallerError {
  override readonly name = "InvalidChannelIdError";
  override readonly code = "INVALID_CHANNEL_ID";
  constructor(readonly channelId: unknown) {
    super(`invalid channel id ${describe(channelId)}: use ${CHANNEL_ID_RULE} (the id open_reader or open_app returned, or one you choose)`);
  }
}

/** Thrown when a string is not a valid event name. */
export class InvalidEventError extends CallerError {
  override readonly name = "InvalidEventError";
  override readonly code = "INVALID_EVENT";
  constructor(readonly event: unknown) {
    super(`invalid event name ${describe(event)}: use 1 to 64 characters from A-Z, a-z, 0-9, "_", ".", ":" and "-"`);
  }
}

/** Thrown when a string is not a valid name for a saved app (the same rule as a channel id). */
export class InvalidAppNameError extends CallerError {
  override readonly name = "InvalidAppNameError";
  override readonly code = "INVALID_APP_NAME";
  constructor(readonly appName: unknown) {
    super(`invalid app name ${describe(appName)}: use ${CHANNEL_ID_RULE}, e.g. quick-poll`);
  }
}

/** True when `value` is a string that matches {@link CHANNEL_ID_PATTERN} and is no {@link WINDOWS_DEVICE_NAME}. */
export function isChannelId(value: unknown): value is string {
  return typeof value === "string" && CHANNEL_ID_PATTERN.test(value) && !WINDOWS_DEVICE_NAME.test(value);
}

/**
 * Returns `value` when it is a valid channel id.
 * @throws InvalidChannelIdError otherwise.
 */
export function assertChannelId(value: unknown): string {
  if (!isChannelId(value)) throw new InvalidChannelIdError(value);
  return value;
}

/**
 * Returns `value` when it is a valid event name.
 * @throws InvalidEventError otherwise.
 */
export function assertEvent(value: unknown): string {
  if (typeof value !== "string" || !EVENT_PATTERN.test(value)) throw new InvalidEventError(value);
  return value;
}

/**
 * Returns `value` when it is a valid saved-app name: the channel-id rule, because the
 * name becomes a file name (`apps/<name>.json`).
 * @throws InvalidAppNameError otherwise.
 */
export function assertAppName(value: unknown): string {
  if (!isChannelId(value)) throw new InvalidAppNameError(value);
  return value;
}

/**
 * Mints a channel id nobody can guess: `ch-<base36 milliseconds>-<80 random bits as hex>`.
 * The time prefix makes ids sort by creation; the random part is what makes them secret.
 */
export function mintChannelId(): string {
  // The global Web Crypto, not node:crypto: this module is on the status line's path,
  // and loading node:crypto costs every one of its runs about 10 ms.
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(10))).toString("hex");
  return `ch-${Date.now().toString(36)}-${random}`;
}

/**
 * Returns `name` when it is a valid state document name.
 * @throws Error otherwise (a programming error: state names are the server's own).
 */
export function assertStateName(name: string): string {
  if (!STATE_NAME_PATTERN.test(name)) throw new Error(`invalid state name ${JSON.stringify(name)}: use ${STATE_NAME_PATTERN}`);
  return name;
}

/**
 * Returns `key` when it is a valid session key.
 * @throws Error otherwise.
 */
export function assertSessionKey(key: string): string {
  if (!SESSION_KEY_PATTERN.test(key)) throw new Error(`invalid session key ${JSON.stringify(key)}: use ${SESSION_KEY_PATTERN}`);
  return key;
}

/**
 * The namespace of a principal in a store: 32 lower-case hex digits (the start of the
 * SHA-256 of its name, server/auth/principal.ts). It names a folder and a key prefix, so
 * it is checked before either is built.
 */
export const PRINCIPAL_NAMESPACE_PATTERN = /^[0-9a-f]{32}$/;

/**
 * Returns `namespace` when it is a valid principal namespace.
 * @throws Error otherwise (a programming error: namespaces are the server's own).
 */
export function assertPrincipalNamespace(namespace: string): string {
  if (!PRINCIPAL_NAMESPACE_PATTERN.test(namespace))
    throw new Error(`invalid principal namespace ${JSON.stringify(namespace.slice(0, 80))}: use ${PRINCIPAL_NAMESPACE_PATTERN}`);
  return namespace;
}

/** A short, printable rendering of a rejected value for error messages. */
function describe(value: unknown): string {
  if (typeof value !== "string") return `of type ${value === null ? "null" : typeof value}`;
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  return `${shown} (${value.length} characters)`;
}
