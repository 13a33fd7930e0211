/**
 * zod schemas of the app tools and of the app stored on a channel. The model-visible
 * inputs declare only their fields' types: every byte of their JSON Schema is context
 * the model pays for on every turn, so the rules (sizes, name and id patterns) are
 * checked in ./channel-app.ts, whose errors say what to change, and the tools'
 * descriptions and the custom-apps recipe state them.
 */
import { z } from "zod";
import { channelIdSchema } from "../tools/schemas.js";

/** The input of `open_app`: a new app (`html`), a saved one (`name`), or neither (the list of saved apps, from the first or `after` a name). */
export const openAppInput = z.object({
  html: z.string().optional(),
  name: z.string().optional(),
  title: z.string().optional(),
  channel_id: z.string().optional(),
  after: z.string().optional(),
});

/** A saved app without its HTML, as listings show it. */
export const savedAppSummary = z.object({ name: z.string(), title: z.string(), description: z.string(), uri: z.string() });

/** The output of `open_app`: the channel the app opened on, or the saved apps when none was named. */
export const openAppOutput = z.object({
  channel_id: z.string().optional(),
  title: z.string().optional(),
  watch_command: z.string().optional(),
  app_url: z.string().optional(),
  next_step: z.string().optional(),
  // Only for a saved app: its name and the note that says how to drive it.
  name: z.string().optional(),
  description: z.string().optional(),
  apps: z.array(savedAppSummary).optional(),
  // Only for the list: how many apps are saved, and how many come after this page.
  total: z.number().optional(),
  more: z.number().optional(),
});

/** The input of `save_app`. */
export const saveAppInput = z.object({ channel_id: z.string(), name: z.string(), description: z.string() });

/** The output of `save_app`. */
export const saveAppOutput = z.object({ name: z.string(), uri: z.string(), replaced: z.boolean() });

/** The app open on a channel (state document `app`), as the shell fetches it. */
export const channelAppSchema = z.object({
  title: z.string(),
  html: z.string(),
  /** The saved app it was opened from, else null. */
  name: z.string().nullable(),
  opened_at: z.string(),
});

/** The input of the app-only `app_state`. */
export const appStateInput = z.object({ channel_id: channelIdSchema });

/** The output of `app_state`: the channel's app, or null when none was opened on it. */
export const appStateOutput = z.object({
  channel_id: z.string(),
  app: channelAppSchema.nullable(),
  browser_tab: z.boolean().optional().describe("Whether browser_link can open the channel in a browser tab."),
});
