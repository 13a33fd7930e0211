/**
 * The zod schemas of the channel tools' inputs and outputs . The rules
 * themselves (id and event patterns, limits) come from the core, so the schemas and
 * the store can never disagree.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { z } from "zod";
import { CHANNEL_ID_PATTERN, CHANNEL_ID_RULE, EVENT_PATTERN, READER_ID_PATTERN, WINDOWS_DEVICE_NAME } from "../../core/ids.js";
import { isJsonValue, MAX_JSON_DEPTH } from "../../core/json.js";
import { characterCount } from "../../core/text.js";

/**
 * A channel id, as the tools accept it (core/ids.ts). The device-name rule is a refinement,
 * left out of the JSON Schema: every model-visible tool carries this schema, and the
 * model's context stays small.
 */
export const channelIdSchema = z
  .string()
  .regex(CHANNEL_ID_PATTERN, `a channel id is ${CHANNEL_ID_RULE} (use the id open_reader or open_app returned)`)
  .refine((id) => !WINDOWS_DEVICE_NAME.test(id), `a channel id is ${CHANNEL_ID_RULE} (use the id open_reader or open_app returned)`);

/**
 * A string of `minChars` to `maxChars` characters, counted as every length limit is
 * (code points, see core/text.ts): what JSON Schema's `minLength` and `maxLength`
 * count, so its JSON Schema states the limit exactly. zod's own `.max()` would count
 * UTF-16 units, two for an emoji.
 */
export function textSchema(maxChars: number, minChars = 0) {
  return z
    .string()
    .refine((text) => inRange(characterCount(text), minChars, maxChars), {
      error: (issue) => `has ${characterCount(issue.input as string)} characters; keep it to ${minChars > 0 ? `${minChars} to ` : ""}${maxChars}`,
    })
    .meta(minChars > 0 ? { minLength: minChars, maxLength: maxChars } : { maxLength: maxChars });
}

function inRange(value: number, min: number, max: number): boolean {
  return value >= min && value <= max;
}

/** An event name, as the tools accept it. */
export const eventSchema = z.string().regex(EVENT_PATTERN, "an event name is 1 to 64 characters from A-Z, a-z, 0-9, _ . : and -");

/** A cursor: the `cursor` of the previous poll. Bounded so that `next_seq` stays a safe integer. */
export const cursorSchema = z
  .number()
  .int()
  .min(0)
  .max(2 ** 50)
  .describe("Your last poll's cursor (acknowledges up to it).");

/**
 * The epoch a cursor came from (protocol/epoch.ts): the `epoch` of the poll that gave it.
 * Its pattern is the store's to check (store/validate.ts `checkCursor`, INVALID_CURSOR),
 * not restated here: the model reads these schemas on every turn, and only a poll's own
 * answer gives it an epoch to pass.
 */
export const epochSchema = z.string();

/** How long a poll may wait for a message, up to `maxMs`. */
export function waitSchema(maxMs: number) {
  return z.number().int().min(0).max(maxMs);
}

/**
 * Message data: any JSON value nested at most MAX_JSON_DEPTH levels. Checked without
 * recursion (z.json() recurses, and a value nested thousands deep overflows the stack).
 */
export const dataSchema = z
  .unknown()
  .refine(isJsonValue, `data must be plain JSON nested at most ${MAX_JSON_DEPTH} levels deep`)
  .describe("Any JSON; default {}.");

/** The input of `notify_ui` and `notify_agent`. */
export const notifyInput = z.object({
  channel_id: channelIdSchema,
  event: eventSchema,
  data: dataSchema.optional(),
});

/** The input of `notify_ui`: `notify_agent`'s, and `ack`, which clears what the agent handled. */
export const notifyUiInput = notifyInput.extend({
  ack: cursorSchema.optional().describe("Also clear the app's messages up to this seq."),
  ack_epoch: epochSchema.optional().describe("ack's epoch."),
});

/** The output of `notify_ui` and `notify_agent`. */
export const notifyOutput = z.object({
  seq: z.number().int().describe("The message's seq in its queue."),
  pending: z.number().int().describe("Messages now waiting to be read."),
  note: z.string().optional().describe("Set when the channel did not exist before: no app has it open."),
});

/** The input of `poll_agent_messages` and `poll_ui_messages`. */
export function pollInput(maxWaitMs: number) {
  return z.object({
    channel_id: channelIdSchema,
    after: cursorSchema.optional(),
    epoch: epochSchema.optional().describe("after's epoch."),
    wait_ms: waitSchema(maxWaitMs).optional(),
  });
}

/** The input of `poll_ui_messages`: a poll, and who reads (store/readers.ts), so that two readers of one channel each receive every message. */
export function uiPollInput(maxWaitMs: number) {
  return pollInput(maxWaitMs).extend({
    reader: z
      .string()
      .regex(READER_ID_PATTERN, "a reader id is 8 to 32 characters from A-Z, a-z, 0-9, _ and -")
      .optional()
      .describe("A token this app chose once per page load: other readers of the channel keep their messages."),
  });
}

/** One message, as polls return it. */
export const messageSchema = z.object({
  seq: z.number().int(),
  event: z.string(),
  data: z.unknown(),
  ts: z.string(),
});

/** The output of both polls. */
export const pollOutput = z.object({
  messages: z.array(messageSchema),
  cursor: z.number().int().describe("Pass as `after` next time."),
  pending: z.number().int().describe("Messages still waiting after this poll."),
  epoch: z.string().describe("Pass with cursor next time; a new one means the queue started again."),
});

/** A wall as tools return it. */
export const wallSchema = z.object({ text: z.string(), posted_at: z.string(), until: z.string() });

/** The output of `poll_ui_messages`: a poll, and the wall of the channel's session while one is up. */
export const uiPollOutput = pollOutput.extend({
  wall: wallSchema.nullable().describe("The agent's status for every reader of the session, or null."),
  missed: z.literal(true).optional().describe("Messages after your cursor were deleted before you read them: reload your state."),
});

/**
 * The input of `post_wall`. Text and duration are checked by the session, whose
 * messages say what to change; the tool's description gives the bounds (every byte of a
 * model-visible schema is context the model pays for on every turn).
 */
export const wallInput = z.object({ text: z.string().optional(), duration_s: z.number().int().optional(), clear: z.boolean().optional() });

/** The output of `post_wall`: when the wall goes, or `null` once it is down (the model knows its text). */
export const wallOutput = z.object({ until: z.string().nullable() });

/** The bounds zod writes for `.int()`: true of every JSON number a caller can send, so saying them costs context for nothing. */
const SAFE_INTEGER_BOUNDS: Readonly<Record<string, number>> = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

/**
 * `schema` with a leaner JSON Schema for `tools/list`: without the `$schema` key and
 * without the safe-integer bounds of `.int()`. The model reads every model-visible
 * tool's schemas on every turn, so these bytes cost context; validation is unchanged.
 */
export function compactSchema<Input, Output>(schema: StandardSchemaWithJSON<Input, Output>): StandardSchemaWithJSON<Input, Output> {
  const standard = schema["~standard"];
  const lean =
    (convert: typeof standard.jsonSchema.input): typeof standard.jsonSchema.input =>
    (options) => {
      const { $schema: _unused, ...rest } = convert(options);
      return stripSafeIntegerBounds(rest) as Record<string, unknown>;
    };
  return {
    "~standard": {
      ...standard,
      jsonSchema: { input: lean(standard.jsonSchema.input), output: lean(standard.jsonSchema.output) },
    },
  };
}

function stripSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSafeIntegerBounds);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).filter(([key, item]) => SAFE_INTEGER_BOUNDS[key] !== item);
  return Object.fromEntries(entries.map(([key, item]) => [key, stripSafeIntegerBounds(item)]));
}
