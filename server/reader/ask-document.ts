/**
 * Asking the user directly: when `open_reader` is called without a document, no reader
 * is open yet to ask through, so the server asks the user with an MCP elicitation (form
 * mode), where the client declared it can (`capabilities.elicitation`). Claude
 * Code since 2.1.76 and VS Code do; a non-interactive run (`claude -p`) answers `cancel`.
 *
 * Both protocol eras are served. On 2025-11-25 the server sends `elicitation/create`
 * and waits for the answer within the call. On 2026-07-28 servers send no requests: the
 * tool answers `input_required` with the form, and the client asks the user and calls
 * the tool again with the answer in `inputResponses`.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";

/** What came of asking, as the tool goes on with it. */
export type DocumentAnswer =
  | { action: "accept"; path?: string; text?: string }
  | { action: "decline" | "cancel" }
  /** The client accepted with content that is not the form's: `problem` says what was wrong. */
  | { action: "invalid"; problem: string }
  /** The client cannot ask: it declared no elicitation, or failed to take the form. */
  | { action: "unsupported" }
  /** 2026-07-28: return `result` from the tool; the client asks and calls again. */
  | { action: "ask"; result: InputRequiredResult };

/** The key of the form among the call's input requests and responses. */
const FORM_KEY = "document";

/** The accepted content: both fields optional, as the form has them. Untrusted: parsed here. */
const answerSchema = z.object({ path: z.string().optional(), text: z.string().optional() });

/**
 * Asks the user for a document: pasted text, or a file path when local files may be read.
 * @param declaredElicitation whether the client declared elicitation at initialize (2025-11-25).
 * @throws whatever the transport throws when the connection breaks while asking.
 */
export async function askForDocument(ctx: ServerContext, declaredElicitation: boolean, readLocalFiles: boolean): Promise<DocumentAnswer> {
  const answered = inputResponse(ctx.mcpReq.inputResponses, FORM_KEY);
  if (answered.kind === "elicit") return toAnswer(answered.action, answered.content);
  const form = documentForm(readLocalFiles);
  // A 2026-07-28 request carries the client's capabilities in its own envelope.
  const envelope = ctx.mcpReq.envelope as Record<string, { elicitation?: unknown } | undefined> | undefined;
  if (envelope) {
    if (envelope[CLIENT_CAPABILITIES_META_KEY]?.elicitation === undefined) return { action: "unsupported" };
    return { action: "ask", result: inputRequired({ inputRequests: { [FORM_KEY]: inputRequired.elicit(form) } }) };
  }
  if (!declaredElicitation) return { action: "unsupported" };
  try {
    // Sent as a plain request rather than with elicitInput, which refuses content that
    // does not fit the form with an error indistinguishable from a client that cannot
    // ask; the content is checked here instead, the same way in both eras.
    const result = await ctx.mcpReq.send({ method: "elicitation/create", params: form });
    return toAnswer(result.action, result.content);
  } catch (error) {
    // A client that declared elicitation but cannot take this form answers with an error.
    if (ctx.mcpReq.signal.aborted) throw error;
    return { action: "unsupported" };
  }
}

/** The form: a text field, and a file path field when local files may be read. */
function documentForm(readLocalFiles: boolean): ElicitRequestFormParams {
  const properties: Record<string, { type: "string"; title: string; description: string }> = {
    text: { type: "string", title: "Text", description: "Paste the markdown or text to read." },
  };
  if (readLocalFiles) properties.path = { type: "string", title: "Or a file", description: "The path of a markdown or text file on this machine." };
  return {
    mode: "form",
    message: "What should the reader show? Paste the text" + (readLocalFiles ? ", or give a file path." : "."),
    requestedSchema: { type: "object", properties },
  };
}

function toAnswer(action: "accept" | "decline" | "cancel", content: unknown): DocumentAnswer {
  if (action !== "accept") return { action };
  const parsed = answerSchema.safeParse(content ?? {});
  if (parsed.success) return { action: "accept", ...parsed.data };
  const problem = parsed.error.issues.map((issue) => `${issue.path.join(".") || "the answer"}: ${issue.message}`).join("; ");
  return { action: "invalid", problem };
}
