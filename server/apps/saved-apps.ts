/**
 * Saved apps as the server offers them: `save_app` keeps the app open on a channel
 * under a name, `open_app {name}` opens it again on a fresh channel, and each is a
 * resource `backchannel://apps/<name>` (the store keeps them: ../../store/saved-app.ts).
 */
import { CallerError } from "../../core/errors.js";
import { assertAppName, assertChannelId } from "../../core/ids.js";
import { SAVED_APP_LIST_PAGE } from "../../core/limits.js";
import { DamagedSavedAppError, type SavedApp, type SavedAppSummary as StoredSummary } from "../../store/saved-app.js";
import type { ChannelStore } from "../../store/store.js";
import { checkDescription, readChannelApp } from "./channel-app.js";

/** A saved app without its HTML, as listings show it. */
export interface SavedAppSummary {
  name: string;
  title: string;
  description: string;
  /** The app as an MCP resource. */
  uri: string;
}

/** Thrown for a name that names no saved app; the message lists those that exist, the first {@link SAVED_APP_LIST_PAGE} by name. */
export class UnknownAppError extends CallerError {
  override readonly name = "UnknownAppError";
  override readonly code = "UNKNOWN_APP";
  constructor(
    readonly appName: string,
    readonly names: string[],
  ) {
    const shown = names.slice(0, SAVED_APP_LIST_PAGE).join(", ");
    const rest = names.length > SAVED_APP_LIST_PAGE ? ` and ${names.length - SAVED_APP_LIST_PAGE} more (open_app {} lists them)` : "";
    const known = names.length > 0 ? `the saved apps are: ${shown}${rest}` : "no app is saved yet";
    super(`no saved app named ${JSON.stringify(appName)}; ${known}`);
  }
}

/** Thrown by `save_app` for a channel on which no app was opened. */
export class NoAppOnChannelError extends CallerError {
  override readonly name = "NoAppOnChannelError";
  override readonly code = "NO_APP_ON_CHANNEL";
  constructor(channelId: string) {
    super(`channel ${channelId} has no app to save: save_app takes the channel_id that open_app returned`);
  }
}

/** The resource URI of the saved app `name`. */
export function savedAppUri(name: string): string {
  return `backchannel://apps/${name}`;
}

/** One page of the saved apps, by name. */
export interface SavedAppPage {
  apps: SavedAppSummary[];
  /** How many apps are saved in all. */
  total: number;
  /** How many come after this page (by name). */
  more: number;
}

/**
 * Up to {@link SAVED_APP_LIST_PAGE} saved apps whose names sort after `after` (from the
 * first when undefined), by name. Only the page's summaries are read, never an app's
 * HTML, so its cost does not grow with the apps saved beyond their names.
 * @throws InvalidAppNameError for an `after` that is not an app name.
 */
export async function listSavedApps(store: ChannelStore, after?: string): Promise<SavedAppPage> {
  if (after !== undefined) assertAppName(after);
  const names = await store.apps.names();
  const following = after === undefined ? names : names.filter((name) => name > after);
  const page = following.slice(0, SAVED_APP_LIST_PAGE);
  const apps = (await store.apps.summaries(page)).map(withUri);
  return { apps, total: names.length, more: following.length - page.length };
}

function withUri(app: StoredSummary): SavedAppSummary {
  return { ...app, uri: savedAppUri(app.name) };
}

/**
 * The saved app `name`.
 * @throws InvalidAppNameError, UnknownAppError, DamagedSavedAppError.
 */
export async function findSavedApp(store: ChannelStore, name: string): Promise<SavedApp> {
  const app = await store.apps.read(assertAppName(name));
  if (app) return app;
  // The names alone: an unknown name must not cost a read of every saved app.
  throw new UnknownAppError(name, await store.apps.names());
}

/**
 * Keeps the app open on `channelId` as `name`, with `description` as the note for a
 * later agent; replaces an app saved under that name before.
 * @returns the saved app and whether it replaced one.
 * @throws InvalidChannelIdError, InvalidAppNameError, InvalidAppError (the description),
 *   NoAppOnChannelError, SavedAppTooLargeError.
 */
export async function saveChannelApp(
  store: ChannelStore,
  channelId: string,
  name: string,
  description: string,
): Promise<{ app: SavedApp; replaced: boolean }> {
  assertChannelId(channelId);
  assertAppName(name);
  const note = checkDescription(description);
  const open = await readChannelApp(store, channelId);
  if (!open) throw new NoAppOnChannelError(channelId);
  // A damaged file of that name is replaced like any other.
  const replaced = await store.apps.read(name).then(
    (existing) => existing !== null,
    (error: unknown) => {
      if (error instanceof DamagedSavedAppError) return true;
      throw error;
    },
  );
  const app: SavedApp = { name, title: open.title, description: note, html: open.html, saved_at: new Date().toISOString() };
  await store.apps.write(app);
  return { app, replaced };
}
