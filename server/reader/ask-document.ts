/**
 * Asking the user directly: when `open_reader` is called without a document, no reader
 * is open yet to ask through, so the server asks the user with an MCP elicitation (form
 * mode), where the client declared it can (`capabilities.elicitation`). HOSTS.md: Claude
 * Code since 2.1.76 and VS Code do; a non-interactive run (`claude -p`) answers `cancel`.
 */
import type { ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";

/** What the user answered, as the tool goes on with it. */
export type DocumentAnswer =
  | { action: "accept"; path?: string; text?: string }
  | { action: "decline" | "cancel" }
  /** The client cannot ask: it declared no elicitation, or this protocol era has no server-sent requests. */
  | { action: "unsupported" };

/** The accepted content: both fields optional, as the form has them. Untrusted: parsed here. */
const answerSchema = z.object({ path: z.string().optional(), text: z.string().optional() });

/**
 * Asks the user for a document: a file path (when local files may be read) or pasted text.
 * @param canAsk whether the client declared the elicitation capability.
 * @throws whatever the transport throws when the connection breaks while asking.
 */
export async function askForDocument(ctx: ServerContext, canAsk: boolean, readLocalFiles: boolean): Promise<DocumentAnswer> {
  if (!canAsk) return { action: "unsupported" };
  const properties: Record<string, { type: "string"; title: string; description: string }> = {
    text: { type: "string", title: "Text", description: "Paste the markdown or text to read." },
  };
  if (readLocalFiles) properties.path = { type: "string", title: "Or a file", description: "The path of a markdown or text file on this machine." };
  let result;
  try {
    result = await ctx.mcpReq.elicitInput({
      mode: "form",
      message: "What should the reader show? Paste the text" + (readLocalFiles ? ", or give a file path." : "."),
      requestedSchema: { type: "object", properties },
    });
  } catch (error) {
    // The 2026-07-28 era has no server-sent requests (the SDK throws before sending);
    // a client that declared elicitation but cannot take a form answers with an error.
    if (ctx.mcpReq.signal.aborted) throw error;
    return { action: "unsupported" };
  }
  if (result.action !== "accept") return { action: result.action };
  const content = answerSchema.safeParse(result.content ?? {});
  return content.success ? { action: "accept", ...content.data } : { action: "accept" };
}
