/**
 * Saved apps: an app the agent wrote (an HTML fragment shown in the app shell) that the
 * user chose to keep, with a note for the agent on how to drive it. Kept by name, beside
 * the channels, so that any later conversation can open it again on a fresh channel.
 * The file store keeps them in `apps/<name>.json` (./file/saved-apps.ts).
 */
import { CallerError } from "../core/errors.js";

/** One saved app, as stored. */
export interface SavedApp {
  /** Its name, the channel-id rule (see `assertAppName` in ../core/ids.ts). */
  name: string;
  /** Shown above the app. */
  title: string;
  /** The agent's note: what the app does and which events it sends and expects. */
  description: string;
  /** The fragment: markup, inline `<style>` and `<script>`. */
  html: string;
  /** When it was saved (ISO-8601 UTC). */
  saved_at: string;
}

/** The saved apps of one store. Every method throws InvalidAppNameError for a bad name before touching anything. */
export interface SavedAppStore {
  /**
   * The saved app `name`, or `null` when there is none.
   * @throws DamagedSavedAppError when it exists but cannot be read as a saved app.
   */
  read(name: string): Promise<SavedApp | null>;
  /**
   * Saves `app` under `app.name`, replacing any app of that name, atomically.
   * @throws SavedAppTooLargeError (nothing changed), I/O errors.
   */
  write(app: SavedApp): Promise<void>;
  /** Every readable saved app, by name; one that cannot be read is left out (and reported by the store). */
  list(): Promise<SavedApp[]>;
  /** The names of the saved apps, sorted, found without reading the apps (a damaged one included). */
  names(): Promise<string[]>;
  /** Removes the saved app `name`. @returns false when there was none. */
  remove(name: string): Promise<boolean>;
  /** The bytes the saved app `name` takes as stored (its JSON), 0 when there is none; measured without reading it. */
  sizeOf(name: string): Promise<number>;
  /** The bytes all saved apps take as stored, measured without reading them. */
  usedBytes(): Promise<number>;
}

/** A saved app is larger than the store keeps; nothing was saved. */
export class SavedAppTooLargeError extends CallerError {
  override readonly name = "SavedAppTooLargeError";
  override readonly code = "SAVED_APP_TOO_LARGE";
  constructor(
    readonly appName: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`the app ${appName} would take ${bytes} bytes, the limit is ${limit}; make its HTML or its description smaller, then save it again`);
  }
}

/** A saved app's file exists but is not a saved app (hand-edited, a link, another kind of file). */
export class DamagedSavedAppError extends CallerError {
  override readonly name = "DamagedSavedAppError";
  override readonly code = "DAMAGED_SAVED_APP";
  constructor(
    readonly appName: string,
    readonly reason: string,
  ) {
    super(`the saved app ${appName} cannot be read (${reason}); open the app again with its HTML and save it again with save_app`);
  }
}

/**
 * `value` as a {@link SavedApp} named `name`.
 * @throws DamagedSavedAppError when a field is missing or of the wrong type, or the name differs.
 */
export function parseSavedApp(value: unknown, name: string): SavedApp {
  const app = value as Partial<Record<keyof SavedApp, unknown>> | null;
  if (typeof app !== "object" || app === null || Array.isArray(app)) throw new DamagedSavedAppError(name, "it is not a JSON object");
  for (const key of ["name", "title", "description", "html", "saved_at"] as const) {
    if (typeof app[key] !== "string") throw new DamagedSavedAppError(name, `its ${key} is not a string`);
  }
  if (app.name !== name) throw new DamagedSavedAppError(name, `it names itself ${JSON.stringify(app.name)}`);
  const { title, description, html, saved_at } = app as SavedApp;
  return { name, title, description, html, saved_at };
}

/**
 * The saved apps named `names`, in that order, each read with `read`. One that is gone
 * meanwhile is left out; one that is damaged is left out and reported with `warn`, so a
 * single bad entry never hides the others. Between two apps it yields to the event loop
 * (a file store's read is synchronous), so that a long listing holds up another call
 * for one app's read at most, never for the whole listing.
 * @throws whatever `read` throws other than DamagedSavedAppError (the store unreachable, say).
 */
export async function readSavedApps(
  names: readonly string[],
  read: (name: string) => Promise<SavedApp | null>,
  warn: (message: string) => void,
): Promise<SavedApp[]> {
  const apps: SavedApp[] = [];
  for (const name of names) {
    await new Promise((resolve) => setImmediate(resolve));
    try {
      const app = await read(name);
      if (app) apps.push(app);
    } catch (error) {
      if (!(error instanceof DamagedSavedAppError)) throw error;
      warn(error.message);
    }
  }
  return apps;
}
