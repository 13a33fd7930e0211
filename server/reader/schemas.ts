/**
 * zod schemas of the reader's tools and of its stored state. Stored state is parsed
 * with them too: a state file is an edge like any other input.
 */
import { z } from "zod";
import { TITLE_MAX_CHARS } from "../../core/limits.js";
import { channelIdSchema, textSchema } from "../tools/schemas.js";

/**
 * The fields of `open_reader`'s input on every transport. What each field is, is in
 * open_reader's description: a description here would cost context on every turn.
 */
const openReaderFields = {
  title: textSchema(TITLE_MAX_CHARS).optional(),
  markdown: z.string().optional(),
  text: z.string().optional(),
  channel_id: channelIdSchema.optional(),
};

/** The input of `open_reader` where local files may be read (stdio): a title and at most one of `text`, `markdown`, `path`. */
export const openReaderInput = z
  .object({
    ...openReaderFields,
    path: z.string().min(1).optional(),
  })
  .refine((input) => [input.markdown, input.text, input.path].filter((value) => value !== undefined).length <= 1, {
    message: "give one of markdown, text or path, not several",
  });

/** The arguments `open_reader` receives (without `path` where local files may not be read). */
export type OpenReaderArgs = z.output<typeof openReaderInput>;

/** What `open_reader` says to a caller that passes `path` where local files may not be read. */
export const NO_PATH_HERE = "path works only when backchannel runs on stdio on your machine; pass the file's content as markdown or text instead";

/**
 * The input of `open_reader` where local files may not be read (HTTP, where the caller
 * need not be the user): no `path`, and a call that passes one anyway, or any other
 * unknown key, is refused saying so rather than having it dropped.
 */
export const openReaderRemoteInput = z
  .strictObject(openReaderFields, {
    error: (issue) => (issue.code === "unrecognized_keys" && issue.keys.includes("path") ? NO_PATH_HERE : undefined),
  })
  .refine((input) => input.markdown === undefined || input.text === undefined, { message: "give markdown or text, not both" });

/** The output of `open_reader`. */
export const openReaderOutput = z.object({
  channel_id: z.string(),
  title: z.string(),
  words: z.number().int(),
  // What to do with them is in the result's text, next_step and the instructions; a description here would cost context on every turn.
  watch_command: z.string().optional(),
  reader_url: z.string().optional(),
  next_step: z.string().optional(),
});

/** Offsets of a passage in one block of the rendered document. */
export const anchorSchema = z.object({
  block: z.number().int().min(0),
  start: z.number().int().min(0),
  end: z.number().int().min(0),
});

/** A stored thread message. */
export const threadMessageSchema = z.object({
  id: textSchema(100, 1),
  role: z.enum(["user", "agent"]),
  text: z.string(),
  ts: z.string(),
});

/** A stored thread. */
export const threadSchema = z.object({
  thread_id: textSchema(100, 1),
  quote: z.string(),
  paragraph: z.string(),
  anchor: anchorSchema,
  messages: z.array(threadMessageSchema),
});

/** Characters of a draft question the server keeps (a question longer than the message limit could not be sent anyway). */
export const DRAFT_MAX_CHARS = 65_536;

/** A question typed but not sent (protocol/reader.ts, `ThreadDraft`). */
export const draftSchema = z.object({
  thread_id: textSchema(100, 1),
  quote: z.string(),
  paragraph: z.string(),
  anchor: anchorSchema,
  text: z.string(),
  after: z.string().nullable(),
});

/** The stored thread log (state document `reader-threads`); `drafts` came later, so a log without it has none. */
export const threadLogSchema = z.object({ threads: z.array(threadSchema), drafts: z.array(draftSchema).default([]) });

/** The stored document (state document `reader-document`). */
export const documentSchema = z.object({
  title: z.string(),
  format: z.enum(["markdown", "text"]),
  text: z.string(),
  words: z.number().int(),
  opened_at: z.string(),
  woken_by: z.literal("hook").optional().describe("The agent is woken by the plugin's hook for every message: it listens from the open on."),
});

/** The input of `reader_state`. */
export const readerStateInput = z.object({
  channel_id: channelIdSchema,
  gzip: z.boolean().optional().describe("Send the document's text gzip-compressed and base64-encoded, as text_gzip."),
});

/** Where the person reads (protocol/reader.ts, `ReaderPosition`), as stored and as `reader_position` takes it. */
export const positionSchema = z.object({ block: z.number().int().min(0).describe("The index of the block at the top of the reader.") });

/** The output of `reader_state`. */
export const readerStateOutput = z.object({
  channel_id: z.string(),
  document: documentSchema.omit({ text: true }).extend({ text: z.string().optional(), text_gzip: z.string().optional() }).nullable(),
  threads: z.array(threadSchema),
  drafts: z.array(draftSchema),
  position: positionSchema.nullable(),
  max_message_bytes: z.number().int().describe("Largest JSON encoding of one message's data: every ask must fit in it."),
  browser_tab: z.boolean().optional().describe("Whether browser_link can open the channel in a browser tab."),
});

/** The input of `reader_record`: one message of a thread, or its draft question, plus the passage when the thread is new. */
export const readerRecordInput = z
  .object({
    channel_id: channelIdSchema,
    thread_id: textSchema(100, 1).describe("The thread the message belongs to."),
    quote: textSchema(20_000).describe("The highlighted passage."),
    paragraph: textSchema(50_000).describe("The paragraph around it."),
    anchor: anchorSchema,
    message: threadMessageSchema
      .omit({ ts: true })
      .optional()
      .describe("The message; a second record with the same id changes nothing. Give message or draft."),
    withdraw: z
      .boolean()
      .optional()
      .describe("Remove this message instead (a question that could not be sent); only the thread's last message can be withdrawn."),
    draft: z
      .object({
        text: textSchema(DRAFT_MAX_CHARS).describe("The question typed so far; empty drops the draft."),
        after: textSchema(100, 1).nullable().describe("The id of the thread's last message when it was typed, null before any."),
      })
      .optional()
      .describe("Keep a question typed but not sent, instead of a message."),
  })
  .refine((input) => (input.message === undefined) !== (input.draft === undefined), { message: "give message or draft, not both or neither" })
  .refine((input) => input.draft === undefined || input.withdraw === undefined, { message: "withdraw goes with a message, not a draft" });

/** The input of `reader_position`. */
export const readerPositionInput = positionSchema.extend({ channel_id: channelIdSchema });

/** The output of `reader_record`. */
export const readerRecordOutput = z.object({
  recorded: z.boolean().describe("False when a message with this id was already stored (or, withdrawing, was not there)."),
  messages: z.number().int().describe("Messages now in the thread."),
});
