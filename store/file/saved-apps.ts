/**
 * Saved apps as files: `apps/<name>.json` in the data directory, one JSON object each
 * (see ../saved-app.ts), written with the HTML last so that a listing reads each file's
 * head only (`summary`), never the HTML.
 *
 * Invariants:
 * - a file is only ever replaced whole and atomically (a temporary file in the same
 *   folder, fsynced, renamed over it), so a reader sees the old app or the new one;
 *   two saves of one name at once leave one of them, whole;
 * - nothing is written or removed through a symbolic link: a rename replaces a link
 *   rather than following it, `rm` removes a link itself, and an `apps` that is not a
 *   real folder is refused; files are read only as regular
 *   files, never through a link (core/fs/safe-open.ts);
 * - the data directory, `apps/` and every file in it are this user's and writable by
 *   nobody else, as every folder and file of the layout (core/fs/safe-open.ts);
 * - no path is built from a name before the name is checked.
 */
import { closeSync, lstatSync, readSync, type Stats } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import { SAVED_APP_MAX_BYTES } from "../../core/limits.js";
import { appsDir, FOLDER_MODE, savedAppFile } from "../../core/paths.js";
import { CallerError } from "../../core/errors.js";
import { isChannelId } from "../../core/ids.js";
import {
  DamagedSavedAppError,
  parseSavedApp,
  readSummaries,
  SAVED_APP_SUMMARY_BYTES,
  SavedAppTooLargeError,
  serializeSavedApp,
  summaryFromHead,
  type SavedApp,
  type SavedAppStore,
  type SavedAppSummary,
} from "../saved-app.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { makeFolder } from "../../core/fs/durable.js";
import { checkOwnerAndMode, openFile, READ_ONLY, reachFolder, readTextFile } from "../../core/fs/safe-open.js";
import { FileTooLargeError, NotRegularFileError } from "../../core/fs/errors.js";
import { type Warn, warnOnStderr } from "../../core/warn.js";

/** The file-backed {@link SavedAppStore} of one data directory. */
export class SavedAppFiles implements SavedAppStore {
  /**
   * @param dataDir the data directory.
   * @param warn where a saved app that cannot be read is reported while listing. Default: one line on stderr.
   * @param reachDataDir makes the data directory before anything is made in it (a principal's folder, reached from the store's; ./file-store.ts). Default: nothing to do.
   */
  constructor(
    private readonly dataDir: string,
    private readonly warn: Warn = warnOnStderr,
    private readonly reachDataDir: () => void = () => undefined,
  ) {}

  async read(name: string): Promise<SavedApp | null> {
    const path = savedAppFile(this.dataDir, name);
    const text = this.readChecked(name, () => readTextFile(path, SAVED_APP_MAX_BYTES));
    if (text === null) return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new DamagedSavedAppError(name, "it is not JSON");
    }
    return parseSavedApp(value, name);
  }

  /** The summary of the saved app `name` from its file's head, or from the whole file when the head is not as serializeSavedApp writes it. */
  private async summary(name: string): Promise<SavedAppSummary | null> {
    const path = savedAppFile(this.dataDir, name);
    const head = this.readChecked(name, () => readHead(path));
    if (head === null) return null;
    const summary = summaryFromHead(head, name);
    if (summary) return summary;
    const app = await this.read(name);
    return app && { name: app.name, title: app.title, description: app.description };
  }

  /** `read()` of the file of `name`, null when there is none, its refusals as DamagedSavedAppError. */
  private readChecked(name: string, read: () => string | null): string | null {
    try {
      return this.checkDir() ? read() : null;
    } catch (error) {
      if (error instanceof NotRegularFileError) throw new DamagedSavedAppError(name, `it is ${error.found}`);
      if (error instanceof FileTooLargeError) throw new DamagedSavedAppError(name, `it is ${error.bytes} bytes, more than a saved app can be`);
      throw error;
    }
  }

  async write(app: SavedApp): Promise<void> {
    const path = savedAppFile(this.dataDir, app.name);
    const text = serializeSavedApp(parseSavedApp(app, app.name));
    const bytes = Buffer.byteLength(text);
    if (bytes > SAVED_APP_MAX_BYTES) throw new SavedAppTooLargeError(app.name, bytes, SAVED_APP_MAX_BYTES);
    this.ensureDir();
    writeFileAtomic(path, text);
  }

  summaries(names: readonly string[]): Promise<SavedAppSummary[]> {
    return readSummaries(names, (name) => this.summary(name), this.warn);
  }

  async names(): Promise<string[]> {
    let files: string[];
    try {
      files = this.checkDir() ? await readdir(appsDir(this.dataDir)) : [];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return files
      .filter((file) => file.endsWith(".json"))
      .map((file) => file.slice(0, -".json".length))
      .filter(isChannelId)
      .sort();
  }

  async remove(name: string): Promise<boolean> {
    const path = savedAppFile(this.dataDir, name);
    if (!this.checkDir()) return false;
    const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (!stats) return false;
    // rm removes a link itself, never what it points to.
    await rm(path, { force: true });
    return true;
  }

  async sizeOf(name: string): Promise<number> {
    const path = savedAppFile(this.dataDir, name);
    if (!this.checkDir()) return 0;
    const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    return stats?.isFile() ? stats.size : 0;
  }

  /** The sizes of the regular files `apps/<name>.json` (links and other files count nothing). */
  async usedBytes(): Promise<number> {
    let bytes = 0;
    for (const name of await this.names()) bytes += await this.sizeOf(name);
    return bytes;
  }

  /** Creates `apps/` (0700) when missing. @throws UnsafeAppsFolderError when something other than a real folder is in its place. */
  private ensureDir(): void {
    this.reachDataDir();
    reachFolder(this.dataDir, this.dataDir, { create: true, warn: this.warn });
    if (!this.checkDir()) makeFolder(appsDir(this.dataDir), { mode: FOLDER_MODE });
  }

  /**
   * Whether `apps/` exists, as a real folder.
   * @throws UnsafeAppsFolderError when something other than a real folder is in its place;
   *   UnsafeLayoutError when it or the data directory is another user's, or writable by others.
   */
  private checkDir(): boolean {
    if (!reachFolder(this.dataDir, this.dataDir, READ_ONLY)) return false;
    const dir = appsDir(this.dataDir);
    let stats: Stats;
    try {
      stats = lstatSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
    if (!stats.isDirectory()) throw new UnsafeAppsFolderError(dir, stats.isSymbolicLink() ? "a symbolic link" : "not a folder");
    checkOwnerAndMode(dir, stats);
    return true;
  }
}

/**
 * The first {@link SAVED_APP_SUMMARY_BYTES} of the saved app's file at `path` as text (a
 * character cut at the end is the HTML's, never the summary's).
 * @returns null when there is no file. @throws as openFile (../../core/fs/safe-open.ts).
 */
function readHead(path: string): string | null {
  const file = openFile(path, "read", SAVED_APP_MAX_BYTES);
  if (!file) return null;
  try {
    const head = Buffer.allocUnsafe(Math.min(file.size, SAVED_APP_SUMMARY_BYTES));
    let length = 0;
    for (let read = -1; read !== 0 && length < head.length; length += read) read = readSync(file.fd, head, length, head.length - length, length);
    return head.subarray(0, length).toString("utf8");
  } finally {
    closeSync(file.fd);
  }
}

/** Something other than a real folder is where the saved apps go; nothing is written through it. */
export class UnsafeAppsFolderError extends CallerError {
  override readonly name = "UnsafeAppsFolderError";
  override readonly code = "UNSAFE_APPS_FOLDER";
  constructor(
    readonly path: string,
    readonly what: string,
  ) {
    super(`${path} is ${what}: backchannel keeps saved apps only in a real folder there; move it away, then save again`);
  }
}
