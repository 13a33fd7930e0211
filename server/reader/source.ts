/**
 * Where `open_reader` gets its document: text or markdown given inline, or a local
 * file (stdio mode only, because only there does the server run on the user's machine).
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { CallerError } from "../../core/errors.js";
import { TITLE_MAX_CHARS } from "../../core/limits.js";
import { isWhiteSpace, oneLine } from "../../core/text.js";

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
  override readonly code = "DOCUMENT_FILE";
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
    const bytes = await readUpTo(handle, absolute, maxBytes);
    const text = decodeText(absolute, bytes);
    const format = MARKDOWN_EXTENSIONS.has(extname(absolute).toLowerCase()) ? "markdown" : "text";
    return { format, text, suggestedTitle: basename(absolute) };
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of the open file `handle`, read to its end rather than to its stated size: a
 * file may grow after fstat, and files of /proc and /sys say 0 bytes but hold text.
 * @throws DocumentFileError when it holds more than `maxBytes`, or a read fails (EIO, as
 *   /proc/self/mem answers).
 */
async function readUpTo(handle: FileHandle, path: string, maxBytes: number): Promise<Buffer> {
  // One byte past the limit, so that a file over it is caught.
  const buffer = Buffer.allocUnsafe(maxBytes + 1);
  let filled = 0;
  while (filled < buffer.length) {
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new DocumentFileError(`could not read ${path} (${code}): give the path of a text or markdown file`);
    }
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  if (filled > maxBytes) throw new DocumentFileError(`${path} is larger than the ${maxBytes} bytes the reader opens: open a smaller file`);
  return buffer.subarray(0, filled);
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

/** A run's characters up to its first letter or digit (or its end), skipped in one step where they are not ASCII. */
const UP_TO_LETTER_OR_DIGIT = /[^\s\p{L}\p{N}]*/uy;

/**
 * The number of words in `text`: runs of non-space characters that hold a letter or
 * digit (markdown's `#`, `-`, `>` are not words). One pass, each character looked at
 * once: the document is the caller's, and a regular expression that rescans a run from
 * each of its characters takes minutes on a megabyte of punctuation.
 */
export function countWords(text: string): number {
  let words = 0;
  let counted = false; // the current run holds a letter or digit, and was counted
  let i = 0;
  while (i < text.length) {
    const unit = text.charCodeAt(i);
    if (isWhiteSpace(unit)) {
      counted = false;
      i += 1;
    } else if (counted) {
      i += 1;
    } else if (unit < 0x80) {
      counted = isAsciiLetterOrDigit(unit);
      words += counted ? 1 : 0;
      i += 1;
    } else {
      UP_TO_LETTER_OR_DIGIT.lastIndex = i;
      UP_TO_LETTER_OR_DIGIT.test(text);
      const stop = UP_TO_LETTER_OR_DIGIT.lastIndex;
      if (stop === i) {
        // A letter or digit beyond ASCII.
        counted = true;
        words += 1;
        i += 1;
      } else {
        i = stop;
      }
    }
  }
  return words;
}

function isAsciiLetterOrDigit(unit: number): boolean {
  const lower = unit | 0x20;
  return (unit >= 0x30 && unit <= 0x39) || (lower >= 0x61 && lower <= 0x7a);
}

/**
 * A title for a document that was given none: its first markdown heading, its file
 * name, or "Document"; as one line without escape sequences (`oneLine`), cut to
 * {@link TITLE_MAX_CHARS}. Linear in the length of the document.
 */
export function chooseTitle(source: DocumentSource, given: string | undefined): string {
  const title = oneLine(given ?? "", TITLE_MAX_CHARS);
  if (title !== "") return title;
  const heading = source.format === "markdown" ? firstHeading(source.text) : undefined;
  return heading ?? (oneLine(source.suggestedTitle ?? "", TITLE_MAX_CHARS) || "Document");
}

/**
 * The text of the first ATX heading that has any, as {@link chooseTitle} returns it; or
 * `undefined` when that text is only control characters and escapes. An ATX heading is
 * a line of one to six `#`, a space or tab, and its text, without the closing `#`s. One
 * pass over the lines, by hand (a regular expression per line costs more than the line).
 */
function firstHeading(text: string): string | undefined {
  for (let lineStart = 0; lineStart < text.length; ) {
    let end = lineStart;
    while (end < text.length && text[end] !== "\n" && text[end] !== "\r") end += 1;
    let from = lineStart;
    while (from < end && from - lineStart < 7 && text[from] === "#") from += 1;
    const hashes = from - lineStart;
    if (hashes >= 1 && hashes <= 6 && (text[from] === " " || text[from] === "\t")) {
      let last = end;
      while (last > from && " \t#".includes(text[last - 1]!)) last -= 1;
      if (last > from) return oneLine(text.slice(from, last), TITLE_MAX_CHARS) || undefined;
    }
    lineStart = end + 1;
  }
  return undefined;
}
