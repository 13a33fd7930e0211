/**
 * The machine-readable part of every error result of backchannel's tools: besides the
 * text (what was wrong and what to do), `structuredContent` is `{ error: { code, message } }`,
 * where `code` is one of core/errors.ts's `ERROR_CODES`. Clients branch on the code,
 * never on the text (docs/ARCHITECTURE.md, "Errors").
 */
import type { ErrorCode } from "../core/errors.js";

/** The `structuredContent` of a tool's error result. */
export interface ToolErrorContent {
  error: { code: ErrorCode; message: string };
}

/**
 * The code of a tool's error result, read from its `structuredContent`.
 * @returns `undefined` when the result carries none (a result that is not an error, or an error from another server).
 */
export function toolErrorCode(structuredContent: unknown): string | undefined {
  const error = (structuredContent as Partial<ToolErrorContent> | null | undefined)?.error;
  return typeof error?.code === "string" ? error.code : undefined;
}
