/**
 * The two shapes every tool answers with: a result (`structuredContent` plus a short
 * text for hosts that show only text) or an error (`isError: true` with a message that
 * says what was wrong and what to do; never a stack trace).
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { CallerError } from "../../core/errors.js";
import { warnOnStderr } from "../../core/warn.js";

/** A successful tool result. `text` is what hosts that ignore `structuredContent` show. */
export function toolResult<T extends Record<string, unknown>>(structured: T, text: string): CallToolResult & { structuredContent: T } {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** An error result whose message is written for the caller: what was wrong and what to do. */
export function messageError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * An error result for `error`. A {@link CallerError} keeps its message; file-system errors name the failing operation and path; anything else is
 * reported as an internal error (the stack goes to stderr, never to the caller).
 */
export function toolError(error: unknown, log: (message: string) => void = warnOnStderr): CallToolResult {
  return { content: [{ type: "text", text: describeError(error, log) }], isError: true };
}

function describeError(error: unknown, log: (message: string) => void): string {
  if (error instanceof CallerError) return error.message;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string") {
    const failure = error as NodeJS.ErrnoException;
    const hint =
      code === "ENOSPC"
        ? "the disk is full; free some space on the disk holding the data directory, then try again"
        : code === "EROFS" || code === "EACCES" || code === "EPERM"
          ? "the data directory is not writable; check its permissions or set BACKCHANNEL_HOME"
          : "check the data directory, then try again";
    return `could not ${failure.syscall ?? "access"} ${failure.path ?? "the data directory"} (${code}): ${hint}`;
  }
  log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return `internal error in backchannel: ${error instanceof Error ? error.message : String(error)}; try again, and report it if it persists`;
}
