/**
 * The built apps' `ui://` resources: each is one HTML file Vite builds from `app/` (the
 * reader, `dist/app/reader.html`) or `app/shell/` (the shell that runs any agent-written
 * app, `dist/app/shell.html`), everything inlined because hosts' CSP forbids fetching
 * anything else. The file is read from disk on each read, so a rebuilt app is served
 * without a restart.
 */
import { readFile } from "node:fs/promises";
import { registerAppResource, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/server";
import { appHtmlPath } from "../../core/package.js";
import { CallerError, type ErrorCode } from "../../core/errors.js";

/** One built app: its URI, its file's name under `dist/app/`, how it is named, and the code of a read when it was not built. */
interface BuiltApp {
  readonly uri: string;
  readonly file: string;
  readonly title: string;
  readonly description: string;
  readonly notBuilt: ErrorCode;
}

/** The reader, rendered by `open_reader`. */
export const READER_APP = {
  uri: "ui://backchannel/reader.html",
  file: "reader",
  title: "backchannel reader",
  description: "The in-chat reader: a document with margin threads answered by the agent.",
  notBuilt: "READER_NOT_BUILT",
} as const satisfies BuiltApp;

/** The shell, rendered by `open_app`. */
export const SHELL_APP = {
  uri: "ui://backchannel/app.html",
  file: "shell",
  title: "backchannel app shell",
  description: "Runs an app the agent wrote (its HTML fragment) with a live channel to the agent.",
  notBuilt: "SHELL_NOT_BUILT",
} as const satisfies BuiltApp;

/** The URI hosts render for `open_reader`. */
export const READER_RESOURCE_URI = READER_APP.uri;

/** Thrown on a read of an app that was not built; its code is the app's `notBuilt`. */
export class AppNotBuiltError extends CallerError {
  override readonly name = "AppNotBuiltError";
  override readonly code: ErrorCode;
  constructor(app: BuiltApp, path: string) {
    super(`the ${app.title} is missing at ${path}: build it with \`npm run build\` in the backchannel folder`);
    this.code = app.notBuilt;
  }
}

/**
 * Registers `app`'s resource on `server`, served from `htmlPath` (default: the built
 * `dist/app/<file>.html`). A read of a file that does not exist fails with {@link AppNotBuiltError}.
 */
export function registerBuiltApp(server: McpServer, app: BuiltApp, htmlPath: string = appHtmlPath(app.file)): void {
  registerAppResource(server, app.title, app.uri, { mimeType: RESOURCE_MIME_TYPE, description: app.description }, async () => ({
    contents: [{ uri: app.uri, mimeType: RESOURCE_MIME_TYPE, text: await readHtml(app, htmlPath) }],
  }));
}

async function readHtml(app: BuiltApp, path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new AppNotBuiltError(app, path);
    throw error;
  }
}
