/**
 * Where `open_reader` gets its document: text or markdown given inline, or a local
 * file (stdio mode only, because only there does the server run on the user's machine).
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { CallerError } from "../../core/errors.js";

/** Largest local file `open_reader` reads. Default 1 MiB: far above any document a person reads in a chat. */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** File name extensions read as markdown; any other file is plain text. */
const MARKDOWN_EXTENSIONS = new Set([".md", ".markdown", ".mdown", ".mkd", ".mdx"]);

/** A document's text, its format, and a title when the source suggests one. */
export interface DocumentSource {
  format: "markdown" | "text";
  text: string;
  /** The file name, for a document read from a file. */
  suggestedTitle?: string;
}

/** A local file that `open_reader` cannot open; the message says why and what to do. */
export class DocumentFileError extends CallerError {
  override readonly name = "DocumentFileError";
}

/**
 * Reads a local UTF-8 text or markdown file. Relative paths are resolved against the
 * server's working directory.
 * @throws DocumentFileError when the file is missing, not a regular file, larger than
 *   `maxBytes`, or not UTF-8 text (it holds NUL bytes or invalid sequences).
 */
export async function readDocumentFile(path: string, maxBytes: number = DEFAULT_MAX_FILE_BYTES): Promise<DocumentSource> {
  const absolute = resolve(path);
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a named pipe with no writer would otherwise block a thread of
    // the pool for ever (and four such calls would stall every file operation of the
    // server); the fstat below then refuses anything but a regular file.
    handle = await open(absolute, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw new DocumentFileError(describeOpenError(absolute, error));
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new DocumentFileError(`${absolute} is not a regular file: give the path of a text or markdown file`);
    if (stats.size > maxBytes) {
      throw new DocumentFileError(
        `${absolute} is ${stats.size} bytes, more than the ${maxBytes} the reader opens: open a smaller file or an excerpt (pass it as markdown)`,
      );
    }
    // Read one byte past the limit so a file that grew since stat() is still caught.
    const buffer = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes) throw new DocumentFileError(`${absolute} is larger than the ${maxBytes} bytes the reader opens: open a smaller file`);
    const bytes = buffer.subarray(0, bytesRead);
    const text = decodeText(absolute, bytes);
    const format = MARKDOWN_EXTENSIONS.has(extname(absolute).toLowerCase()) ? "markdown" : "text";
    return { format, text, suggestedTitle: basename(absolute) };
  } finally {
    await handle.close();
  }
}

/**
 * UTF-8 text of `bytes` without a byte-order mark. A character cut off at the very end
 * (a file read while another process appends to it) is left out, not refused.
 * @throws DocumentFileError for binary content.
 */
function decodeText(path: string, bytes: Buffer): string {
  if (bytes.includes(0)) throw new DocumentFileError(`${path} looks binary (it contains NUL bytes): the reader opens UTF-8 text or markdown only`);
  try {
    // `stream: true` holds back a sequence cut off at the end; a bad sequence anywhere still throws.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes, { stream: true });
  } catch {
    throw new DocumentFileError(`${path} is not valid UTF-8 text: convert it to UTF-8, or open a text or markdown file`);
  }
}

function describeOpenError(path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return `no file at ${path}: check the path (a relative path is resolved against ${process.cwd()})`;
  if (code === "EACCES" || code === "EPERM") return `${path} is not readable by the server (${code}): check its permissions`;
  if (code === "EISDIR") return `${path} is a folder: give the path of a text or markdown file`;
  return `could not open ${path} (${code ?? (error as Error).message}): check the path`;
}

/** The number of words in `text`: runs of non-space characters that hold a letter or digit (markdown's `#`, `-`, `>` are not words). */
export function countWords(text: string): number {
  return text.match(/\S*[\p{L}\p{N}]\S*/gu)?.length ?? 0;
}

/** A title for a document that was given none: its first markdown heading, its file name, or "Document". */
export function chooseTitle(source: DocumentSource, given: string | undefined): string {
  if (given?.trim()) return given.trim();
  if (source.format === "markdown") {
    const heading = source.text.match(/^#{1,6}[ \t]+(.+?)[ \t#]*$/m)?.[1];
    if (heading) return heading.slice(0, 200);
  }
  return source.suggestedTitle ?? "Document";
}
