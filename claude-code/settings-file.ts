/**
 * Claude Code's settings.json as a JSON object that is read, checked, and written back
 * whole without disturbing what it holds: the other keys keep their values and their
 * order, and a file that is not what it should be is never overwritten.
 */
import { chmodSync, existsSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
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

/**
 * Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
 * @throws NoHomeFolderError when neither names a folder.
 */
export function defaultSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CLAUDE_CONFIG_DIR) return join(env.CLAUDE_CONFIG_DIR, "settings.json");
  const home = homeFolder();
  if (home === undefined) throw new NoHomeFolderError("Claude Code's settings", "pass --settings FILE, or set CLAUDE_CONFIG_DIR");
  return join(home, ".claude", "settings.json");
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
