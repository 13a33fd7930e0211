/**
 * What the client on the other end can do, and so what its model is offered
 * (docs/ARCHITECTURE.md, "Clients"). Decided once per server instance, from what the
 * client declared in its opening request (stdio: `initialize`, or the per-request
 * envelope of 2026-07-28; HTTP: each request, ../transports/client-declaration.ts) and
 * how the server was started (`serve --apps`, `serve --wake`):
 *
 * - a client that declares the MCP Apps extension shows apps: the reader renders in
 *   its chat, and its apps call the app-only tools;
 * - any other client is offered no app-only tool (Gemini CLI lists every tool to its
 *   model, app-only ones included), and `open_reader` / `open_app` hand it a link to the
 *   browser host instead; a client that declares backchannel's app-side extension (the
 *   remote watcher) still calls the app-only tools;
 * - the model is told only of the wake path it has: the plugin's hook (arm nothing), a
 *   shell for background commands, or a chat page, where only the person's next message
 *   gives it a turn.
 *
 * A client that declared nothing the server could read (a library user's server, or a
 * 2025 request over stateless HTTP from a client that dropped its session id) is served
 * as before: everything.
 */
import { APP_MIME_TYPE, APP_SIDE_EXTENSION, UI_EXTENSION } from "../protocol/client-capabilities.js";

/**
 * How the model gets a turn when the app sends something: `hook`, the Claude Code
 * plugin's wake hook (nothing to arm); `shell`, a background command it runs (the
 * watcher); `chat`, only the person's next message (a chat page: no shell).
 */
export type WakePath = "hook" | "shell" | "chat";

/** The wake paths, for the command line. */
export const WAKE_PATHS: readonly WakePath[] = ["hook", "shell", "chat"];

/** Whether `word` names a wake path. */
export function isWakePath(word: string): word is WakePath {
  return (WAKE_PATHS as readonly string[]).includes(word);
}

/** What a server instance offers its client. */
export interface ClientView {
  /** The client renders MCP Apps: the reader shows in its chat. */
  showsApps: boolean;
  /** The client may call the app-only tools: it shows apps, or it is backchannel's own app side. */
  callsAppTools: boolean;
  /** How its model is woken. */
  wake: WakePath;
}

/** What a client declared about itself: its capabilities' `extensions`, and its name (`clientInfo.name`). */
export interface DeclaredClient {
  extensions: Readonly<Record<string, unknown>>;
  name: string;
}

/** How the server was started: settings that override what the client declares. */
export interface ClientSettings {
  /** Treat the client as an MCP Apps host whatever it declares (`serve --apps`: behind a bridge that drops its client's capabilities). */
  apps?: boolean;
  /** The wake path (`serve --wake`; the plugin passes `hook`). */
  wake?: WakePath;
}

/** The view of a client nothing is known about: everything, as a server that checks nothing would offer. */
export const FULL_VIEW: ClientView = Object.freeze({ showsApps: true, callsAppTools: true, wake: "shell" });

/**
 * Names (`clientInfo.name`) of clients whose model has no shell: chat pages and
 * desktop chats, where a background command cannot run (mcp-use's inspector: its chat's
 * model is given the server's tools only).
 */
const CHAT_CLIENTS = [/^claude-ai$/i, /^openai-mcp$/i, /chatgpt/i, /^mcp-use inspector$/i];

/**
 * The view of a client that declared `declared` (undefined: unknown), under `settings`.
 * Default settings: none, everything as declared.
 */
export function clientView(declared: DeclaredClient | undefined, settings: ClientSettings = {}): ClientView {
  if (declared === undefined) return { ...FULL_VIEW, ...(settings.wake ? { wake: settings.wake } : {}) };
  const showsApps = settings.apps ?? declaresApps(declared.extensions);
  const appSide = isObject(declared.extensions[APP_SIDE_EXTENSION]);
  const wake = settings.wake ?? (CHAT_CLIENTS.some((pattern) => pattern.test(declared.name)) ? "chat" : "shell");
  return { showsApps, callsAppTools: showsApps || appSide, wake };
}

/** Whether `extensions` hold the MCP Apps extension for the apps' MIME type (or for any type, when it names none). */
function declaresApps(extensions: Readonly<Record<string, unknown>>): boolean {
  const ui = extensions[UI_EXTENSION];
  if (!isObject(ui)) return false;
  const mimeTypes = (ui as { mimeTypes?: unknown }).mimeTypes;
  return mimeTypes === undefined || (Array.isArray(mimeTypes) && mimeTypes.includes(APP_MIME_TYPE));
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
