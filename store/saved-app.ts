/**
 * Saved apps: an app the agent wrote (an HTML fragment shown in the app shell) that the
 * user chose to keep, with a note for the agent on how to drive it. Kept by name, beside
 * the channels, so that any later conversation can open it again on a fresh channel.
 * The file store keeps them in `apps/<name>.json` (./file/saved-apps.ts), Redis in
 * `bc:app:{<name>}` (./redis/saved-apps.ts); each as one record whose head is its summary
 * (docs/ARCHITECTURE.md, "Saved apps").
 */
import { CallerError } from "../core/errors.js";
import { APP_DESCRIPTION_MAX_CHARS, TITLE_MAX_CHARS } from "../core/limits.js";

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

/** A saved app without its HTML, as listings show it: read from the head of its record only. */
export type SavedAppSummary = Pick<SavedApp, "name" | "title" | "description">;

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
  /**
   * The summaries of the saved apps named `names` (a page of {@link names}), in that
   * order, each read from the head of its record ({@link SAVED_APP_SUMMARY_BYTES}), never
   * its HTML; a record whose head is not as {@link serializeSavedApp} writes it is read
   * whole. One that is gone is left out; one that cannot be read is left out and reported
   * by the store ({@link readSummaries}).
   */
  summaries(names: readonly string[]): Promise<SavedAppSummary[]>;
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
 * The stored text of `app`: its JSON with the HTML last, so that the summary (name,
 * title, description, saved_at) is the record's head and a listing reads that head
 * only ({@link summaryFromHead}). Both stores write a saved app as this text, whole.
 */
export function serializeSavedApp(app: SavedApp): string {
  const { name, title, description, saved_at, html } = app;
  return JSON.stringify({ name, title, description, saved_at, html });
}

/**
 * How many bytes of a record's head always hold its summary: the name (64 characters),
 * title and description at their limits with every character escaped (`\uXXXX`, the
 * most JSON.stringify makes of one character), saved_at and the keys.
 */
export const SAVED_APP_SUMMARY_BYTES = 6 * (64 + TITLE_MAX_CHARS + APP_DESCRIPTION_MAX_CHARS) + 256;

/** Where the HTML starts in a record as JSON.stringify writes it: inside a string every `"` is escaped, so the first match is the key. */
const HTML_KEY = ',"html":"';

/**
 * The summary of the saved app `name` from `head`, the first bytes of its record, or
 * `null` when the head is not the summary then the HTML, as {@link serializeSavedApp}
 * writes it (a record edited by hand, say): the caller then reads the record whole.
 * Records written before saved_at came before the HTML qualify too: the summary needs
 * neither.
 */
export function summaryFromHead(head: string, name: string): SavedAppSummary | null {
  const end = head.indexOf(HTML_KEY);
  if (end < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(`${head.slice(0, end)}}`);
  } catch {
    return null;
  }
  const fields = value as Partial<Record<keyof SavedAppSummary, unknown>> | null;
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return null;
  const { title, description } = fields;
  if (fields.name !== name || typeof title !== "string" || typeof description !== "string") return null;
  return { name, title, description };
}

/**
 * The summaries of the saved apps named `names`, in that order, each read with
 * `summary`. One that is gone meanwhile is left out; one that is damaged is left out and
 * reported with `warn`, so a single bad entry never hides the others. Between two apps it
 * yields to the event loop (a file store's read is synchronous), so that a long listing
 * holds up another call for one summary's read at most.
 * @throws whatever `summary` throws other than DamagedSavedAppError (the store unreachable, say).
 */
export async function readSummaries(
  names: readonly string[],
  summary: (name: string) => Promise<SavedAppSummary | null>,
  warn: (message: string) => void,
): Promise<SavedAppSummary[]> {
  const apps: SavedAppSummary[] = [];
  for (const name of names) {
    await new Promise((resolve) => setImmediate(resolve));
    try {
      const app = await summary(name);
      if (app) apps.push(app);
    } catch (error) {
      if (!(error instanceof DamagedSavedAppError)) throw error;
      warn(error.message);
    }
  }
  return apps;
}
