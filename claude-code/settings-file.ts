/**
 * Claude Code's settings.json as a JSON object that is read, checked, and written back
 * whole without disturbing what it holds: the other keys keep their values and their
 * order, and a file that is not what it should be is never overwritten.
 */
import { chmodSync, existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { CallerError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";
import { homeFolder, NoHomeFolderError } from "../core/paths.js";
import { writeFileAtomic } from "../core/fs/atomic-write.js";
import { makeFolder } from "../core/fs/durable.js";
import { NotAJsonFileError, readJsonFile } from "./json-file.js";

/** A JSON object, as settings.json and its `statusLine` are. */
export type JsonObject = { [key: string]: JsonValue };

/** Thrown when a file is not what it should be; the message names the file, the problem and what to do. */
export class SettingsFileError extends CallerError {
  override readonly name = "SettingsFileError";
  override readonly code = "SETTINGS_FILE";
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}; fix or move the file by hand, then try again (nothing was changed)`);
  }
}

/** Thrown when the folder a settings file would go in is missing or not a folder; the message names it and what to do. */
export class SettingsFolderError extends CallerError {
  override readonly name = "SettingsFolderError";
  override readonly code = "SETTINGS_FILE";
}

/**
 * Makes sure the folder of the settings file at `settingsPath` (absolute) is there, making
 * it only where Claude Code keeps settings: the default file's folder (`$CLAUDE_CONFIG_DIR`
 * or `~/.claude`, with its parents), or a `.claude` folder in a folder that exists (a
 * project's). Any other missing folder is most often a mistyped path, and a command that
 * made it would leave a settings file Claude Code never reads.
 * @throws SettingsFolderError when the folder is missing elsewhere, or is not a folder (nothing is made then); I/O errors.
 */
export function prepareSettingsFolder(settingsPath: string, env: NodeJS.ProcessEnv = process.env): void {
  const folder = dirname(settingsPath);
  const kind = kindOf(folder);
  if (kind === "folder") return;
  if (kind === "other")
    throw new SettingsFolderError(`${folder} is not a folder, so ${settingsPath} cannot be a settings file: check the path (nothing was changed)`);
  const userSettings = userSettingsPath(env);
  if (userSettings !== undefined && resolve(settingsPath) === resolve(userSettings)) {
    makeFolder(folder, { parents: true });
    return;
  }
  if (basename(folder) === ".claude" && kindOf(dirname(folder)) === "folder") {
    makeFolder(folder);
    return;
  }
  throw new SettingsFolderError(
    `the folder ${folder} does not exist: check the path (nothing was changed). Claude Code reads ${userSettings ?? "~/.claude/settings.json"}, ` +
      "and <project>/.claude/settings.json or settings.local.json; a missing .claude folder of an existing project is made, no other folder",
  );
}

/** What is at `path` (links followed): a folder, something else, or nothing (also when a part of the way is not a folder). */
function kindOf(path: string): "folder" | "other" | "missing" {
  try {
    return statSync(path).isDirectory() ? "folder" : "other";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return "missing";
    throw error;
  }
}

/**
 * Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
 * @throws NoHomeFolderError when neither names a folder.
 */
export function defaultSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  const path = userSettingsPath(env);
  if (path === undefined) throw new NoHomeFolderError("Claude Code's settings", "pass --settings FILE, or set CLAUDE_CONFIG_DIR");
  return path;
}

/** {@link defaultSettingsPath}, or `undefined` when neither CLAUDE_CONFIG_DIR nor a home folder names one. */
function userSettingsPath(env: NodeJS.ProcessEnv): string | undefined {
  if (env.CLAUDE_CONFIG_DIR) return join(env.CLAUDE_CONFIG_DIR, "settings.json");
  const home = homeFolder();
  return home === undefined ? undefined : join(home, ".claude", "settings.json");
}

/** True when `value` is a JSON object (not an array, not null). */
export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads a JSON object file.
 * @returns the object, or `null` when the file does not exist.
 * @throws SettingsFileError when it is not a regular file, not JSON or not an object; I/O errors as they are.
 */
export function readJsonObject(path: string): JsonObject | null {
  let value: JsonValue | undefined;
  try {
    value = readJsonFile(path);
  } catch (error) {
    if (error instanceof NotAJsonFileError) throw new SettingsFileError(path, error.problem);
    if (!(error instanceof SyntaxError)) throw error;
    throw new SettingsFileError(path, `it is not JSON (${error.message})`);
  }
  if (value === undefined) return null;
  if (!isJsonObject(value))
    throw new SettingsFileError(path, `it holds ${Array.isArray(value) ? "an array" : JSON.stringify(value)}, not a JSON object`);
  return value;
}

/**
 * Writes `value` to `path` as JSON with 2-space indentation and a trailing newline,
 * atomically (a temporary file renamed over it), creating the folder when missing.
 * A symbolic link (settings kept in a dotfiles repository) is written through, not
 * replaced, and an existing file keeps its permissions.
 * @throws I/O errors (EACCES, ENOSPC, …); the file keeps its previous content then.
 */
export function writeJsonObject(path: string, value: JsonObject): void {
  const target = existsSync(path) ? realpathSync(path) : path;
  const mode = existsSync(target) ? statSync(target).mode & 0o7777 : undefined;
  makeFolder(dirname(target), { parents: true });
  writeFileAtomic(target, `${JSON.stringify(value, null, 2)}\n`);
  // writeFileAtomic makes a private (0600) file: give back the mode the user had.
  if (mode !== undefined) chmodSync(target, mode);
}
