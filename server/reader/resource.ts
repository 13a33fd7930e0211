/**
 * The reader's `ui://` resource: the single HTML file Vite builds from `app/`
 * (`dist/app/reader.html`, everything inlined, because hosts' CSP forbids fetching
 * anything else).
 */
import { readFile } from "node:fs/promises";
import { appHtmlPath } from "../../core/package.js";
import { CallerError } from "../../core/errors.js";

/** The URI hosts render for `open_reader`. */
export const READER_RESOURCE_URI = "ui://backchannel/reader.html";

/** Where the build puts the reader. */
export const READER_HTML_PATH = appHtmlPath("reader");

/** Thrown when the reader was not built. */
export class ReaderNotBuiltError extends CallerError {
  override readonly name = "ReaderNotBuiltError";
  override readonly code = "READER_NOT_BUILT";
  constructor(path: string) {
    super(`the reader app is missing at ${path}: build it with \`npm run build\` in the backchannel folder`);
  }
}

/**
 * The reader's HTML, read from disk on each call so a rebuilt app is served without a restart.
 * @throws ReaderNotBuiltError when the file does not exist.
 */
export async function readReaderHtml(path: string = READER_HTML_PATH): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new ReaderNotBuiltError(path);
    throw error;
  }
}
