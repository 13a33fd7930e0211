/**
 * The two shapes every tool answers with: a result (`structuredContent` plus a short
 * text for hosts that show only text) or an error (`isError: true` with a message that
 * says what was wrong and what to do, never a stack trace, and its stable code in
 * `structuredContent`, protocol/tool-error.ts); and tool code's one error boundary
 * ({@link attempt}): every handler is registered {@link guarded}, so a handler validates,
 * calls the store and shapes the result, and throws whatever fails.
 */
import { type CallToolResult, ResourceNotFoundError } from "@modelcontextprotocol/server";
import { callerErrorCode, type ErrorCode } from "../../core/errors.js";
import { warnOnStderr } from "../../core/warn.js";
import type { ToolErrorContent } from "../../protocol/tool-error.js";

/** A successful tool result. `text` is what hosts that ignore `structuredContent` show. */
export function toolResult<T extends Record<string, unknown>>(structured: T, text: string): CallToolResult & { structuredContent: T } {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** An error result whose message is written for the caller: what was wrong and what to do. */
export function messageError(code: ErrorCode, message: string): CallToolResult {
  const structured: ToolErrorContent = { error: { code, message } };
  return { content: [{ type: "text", text: message }], structuredContent: { ...structured }, isError: true };
}

/**
 * Tool code's one error boundary: `work`'s value, or `onError(error)`'s when it throws.
 * A handler's error result ({@link guarded}), or what a step that may fail without
 * failing the call (keeping an answer, a browser link, a progress notification) gives instead.
 */
export async function attempt<T>(work: () => Promise<T>, onError: (error: unknown) => T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    return onError(error);
  }
}

/** A tool handler whose throws are answered as {@link toolError}: every tool is registered through it. */
export function guarded<Args extends unknown[], Result>(
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result | CallToolResult> {
  return (...args) =>
    attempt<Result | CallToolResult>(
      () => handler(...args),
      (error) => toolError(error),
    );
}

/** A resource read whose unknown recipe or app (`UNKNOWN_RECIPE`, `UNKNOWN_APP`) is the protocol's "resource not found"; other errors pass as they are. */
export function guardedRead<Rest extends unknown[], R>(read: (uri: URL, ...rest: Rest) => Promise<R>): (uri: URL, ...rest: Rest) => Promise<R> {
  return (uri, ...rest) =>
    attempt(
      () => read(uri, ...rest),
      (error) => {
        const code = callerErrorCode(error);
        throw code === "UNKNOWN_RECIPE" || code === "UNKNOWN_APP" ? new ResourceNotFoundError(uri.href, (error as Error).message) : error;
      },
    );
}

/**
 * An error result for `error`, as {@link describeError} says it.
 */
export function toolError(error: unknown, log: (message: string) => void = warnOnStderr): CallToolResult {
  const { code, message } = describeError(error, log);
  return messageError(code, message);
}

/**
 * What the caller is told of `error`. A caller error (one with a code of core/errors.ts,
 * from this copy of the package or another) keeps its message and code; file-system
 * errors name the failing operation and path (`FILE_SYSTEM`); anything else is reported
 * as an internal error (`INTERNAL`; the stack goes to `log`, stderr by default, never to the caller).
 */
export function describeError(error: unknown, log: (message: string) => void = warnOnStderr): { code: ErrorCode; message: string } {
  const code = callerErrorCode(error);
  if (code !== undefined) return { code, message: (error as Error).message };
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof errno === "string") return { code: "FILE_SYSTEM", message: describeFileSystemError(error as NodeJS.ErrnoException) };
  log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return {
    code: "INTERNAL",
    message: `internal error in backchannel: ${error instanceof Error ? error.message : String(error)}; try again, and report it if it persists`,
  };
}

function describeFileSystemError(failure: NodeJS.ErrnoException): string {
  const code = failure.code;
  const hint =
    code === "ENOSPC"
      ? "the disk is full; free some space on the disk holding the data directory, then try again"
      : code === "EROFS" || code === "EACCES" || code === "EPERM"
        ? "the data directory is not writable; check its permissions or set BACKCHANNEL_HOME"
        : "check the data directory, then try again";
  return `could not ${failure.syscall ?? "access"} ${failure.path ?? "the data directory"} (${code}): ${hint}`;
}
