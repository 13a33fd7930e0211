/**
 * The app open on a channel: the agent's HTML fragment and its title, kept in the
 * channel's state document `app` so that the shell, rendered or re-rendered by any
 * server process, fetches it through `app_state` (hosts do not always hand an app its
 * tool input). Also the checks every app passes before it is stored or saved.
 */
import { CallerError } from "../../core/errors.js";
import { APP_STATE } from "../../protocol/channel-state.js";
import { APP_DESCRIPTION_MAX_CHARS, APP_HTML_MAX_BYTES, TITLE_MAX_CHARS } from "../../core/limits.js";
import { characterCount } from "../../core/text.js";
import type { ChannelStore } from "../../store/store.js";
import { channelAppSchema } from "./schemas.js";
import type { z } from "zod";

/** The app open on a channel. */
export type ChannelApp = z.infer<typeof channelAppSchema>;

/** The title of an app opened without one. */
export const DEFAULT_APP_TITLE = "App";

/** An app's fragment, title or note breaks a rule; the message says which and what to do. */
export class InvalidAppError extends CallerError {
  override readonly name = "InvalidAppError";
  override readonly code = "INVALID_APP";
}

/** Thrown when a state document `app` exists but does not have the expected shape. */
export class CorruptAppStateError extends CallerError {
  override readonly name = "CorruptAppStateError";
  override readonly code = "CORRUPT_APP_STATE";
  constructor(channelId: string, detail: string) {
    super(`the app of channel ${channelId} is damaged (${detail}); open it again with open_app`);
  }
}

/**
 * `html` when it is a fragment the shell can show: not blank, at most
 * {@link APP_HTML_MAX_BYTES} bytes of UTF-8.
 * @throws InvalidAppError otherwise.
 */
export function checkFragment(html: string): string {
  if (html.trim() === "") throw new InvalidAppError("html is empty: pass the app's markup, with its <style> and <script> inline");
  const bytes = Buffer.byteLength(html);
  if (bytes > APP_HTML_MAX_BYTES) {
    throw new InvalidAppError(
      `html is ${bytes} bytes, the limit is ${APP_HTML_MAX_BYTES} (${APP_HTML_MAX_BYTES / 1024} KiB): make the app smaller ` +
        "(no inlined libraries or large images; send data over the channel after ready instead)",
    );
  }
  return html;
}

/**
 * `title` trimmed, or `fallback` when it is missing or blank.
 * @throws InvalidAppError when it is longer than {@link TITLE_MAX_CHARS} characters (code points, as every limit counts them).
 */
export function checkTitle(title: string | undefined, fallback: string): string {
  const trimmed = title?.trim() ?? "";
  const chars = characterCount(trimmed);
  if (chars > TITLE_MAX_CHARS) throw new InvalidAppError(`title is ${chars} characters, the limit is ${TITLE_MAX_CHARS}: shorten it`);
  return trimmed === "" ? fallback : trimmed;
}

/**
 * `description` trimmed, when it is a usable note for a saved app.
 * @throws InvalidAppError when it is blank or longer than {@link APP_DESCRIPTION_MAX_CHARS} characters.
 */
export function checkDescription(description: string): string {
  const trimmed = description.trim();
  if (trimmed === "") {
    throw new InvalidAppError(
      "description is empty: say what the app does and which events it sends and expects, so that a later conversation can drive it",
    );
  }
  const chars = characterCount(trimmed);
  if (chars > APP_DESCRIPTION_MAX_CHARS) {
    throw new InvalidAppError(`description is ${chars} characters, the limit is ${APP_DESCRIPTION_MAX_CHARS}: shorten it`);
  }
  return trimmed;
}

/**
 * The app open on `channelId`, or `null` when none was opened there.
 * @throws CorruptAppStateError when the stored app does not parse.
 */
export async function readChannelApp(store: ChannelStore, channelId: string): Promise<ChannelApp | null> {
  const raw = await store.readState(channelId, APP_STATE);
  if (raw === null) return null;
  const parsed = channelAppSchema.safeParse(raw);
  if (!parsed.success) throw new CorruptAppStateError(channelId, parsed.error.issues[0]?.message ?? "bad shape");
  return parsed.data;
}

/**
 * Makes `app` the app of `channelId`, replacing any app opened there before.
 * @throws StateTooLargeError (nothing changed).
 */
export async function writeChannelApp(store: ChannelStore, channelId: string, app: ChannelApp): Promise<void> {
  await store.updateState(channelId, APP_STATE, () => app);
}
