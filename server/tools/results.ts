/**
 * The two shapes every tool answers with: a result (`structuredContent` plus a short
 * text for hosts that show only text) or an error (`isError: true` with a message that
 * says what was wrong and what to do, never a stack trace, and its stable code in
 * `structuredContent`, protocol/tool-error.ts).
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
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
 * An error result for `error`. A caller error (one with a code of core/errors.ts, from
 * this copy of the package or another) keeps its message and code; file-system errors
 * name the failing operation and path (`FILE_SYSTEM`); anything else is reported as an
 * internal error (`INTERNAL`; the stack goes to stderr, never to the caller).
 */
export function toolError(error: unknown, log: (message: string) => void = warnOnStderr): CallToolResult {
  const code = callerErrorCode(error);
  if (code !== undefined) return messageError(code, (error as Error).message);
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof errno === "string") return messageError("FILE_SYSTEM", describeFileSystemError(error as NodeJS.ErrnoException));
  log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return messageError(
    "INTERNAL",
    `internal error in backchannel: ${error instanceof Error ? error.message : String(error)}; try again, and report it if it persists`,
  );
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
