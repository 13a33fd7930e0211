/**
 * The app shell's `ui://` resource: the single HTML file Vite builds from `app/shell/`
 * (`dist/app/shell.html`, everything inlined, because hosts' CSP forbids fetching
 * anything else). It runs any agent-written app; the app itself comes from the channel.
 */
import { readFile } from "node:fs/promises";
import { CallerError } from "../../core/errors.js";
import { appHtmlPath } from "../../core/package.js";

/** The URI hosts render for `open_app`. */
export const SHELL_RESOURCE_URI = "ui://backchannel/app.html";

/** Where the build puts the shell. */
export const SHELL_HTML_PATH = appHtmlPath("shell");

/** Thrown when the shell was not built. */
export class ShellNotBuiltError extends CallerError {
  override readonly name = "ShellNotBuiltError";
  override readonly code = "SHELL_NOT_BUILT";
  constructor(path: string) {
    super(`the app shell is missing at ${path}: build it with \`npm run build\` in the backchannel folder`);
  }
}

/**
 * The shell's HTML, read from disk on each call so a rebuilt shell is served without a restart.
 * @throws ShellNotBuiltError when the file does not exist.
 */
export async function readShellHtml(path: string = SHELL_HTML_PATH): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new ShellNotBuiltError(path);
    throw error;
  }
}
