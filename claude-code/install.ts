/**
 * `backchannel install statusline` and `backchannel uninstall statusline`: put
 * backchannel's status line into a Claude Code settings file and take it out again,
 * leaving everything else as it was.
 *
 * Claude Code has one status line and no way to compose several (docs/ARCHITECTURE.md, "Hosts"), so install
 * keeps the one it replaces in a stash (./stash.ts) and the new command runs it first;
 * uninstall puts the stash back exactly (the same object, or no key at all).
 *
 * Order of writes, so that a crash between two never loses the user's status line:
 * install writes the stash before settings.json; uninstall writes settings.json before
 * removing the stash (a stash whose status line is back in place is then cleaned up by
 * the next uninstall).
 *
 * Each install and uninstall reads and writes both files under the lock of the settings
 * file (`<settings>.lock`, the store's inter-process lock), so that two of them at once
 * run one after the other: interleaved, an uninstall could put back a stash that an
 * install had just replaced, and the user's own status line was lost.
 */
import { existsSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { backchannelCommand, shellQuote } from "../core/commands.js";
import type { JsonValue } from "../core/json.js";
import { withLock } from "../core/fs/lock.js";
import { isJsonObject, prepareSettingsFolder, readJsonObject, SettingsFileError, writeJsonObject, type JsonObject } from "./settings-file.js";
import { readStash, removeStash, stashPathFor } from "./stash.js";

/** How often Claude Code re-runs the status line when the replaced one did not say: new questions show between turns. */
export const DEFAULT_REFRESH_SECONDS = 5;

/** What an install or uninstall did: `ok` (exit 0, message on stdout) or refused (exit 1, message on stderr). */
export interface Outcome {
  ok: boolean;
  message: string;
}

/** A status line command of backchannel's, whichever prefix and stash it names. */
const OUR_COMMAND = /(^|\s)statusline\s+--stash\s/;

/**
 * Installs backchannel's status line in the settings file at `settingsPath` (absolute),
 * creating the file when missing (and its folder where `prepareSettingsFolder` may). The current `statusLine` goes to the
 * stash; the new one keeps its `padding` and `refreshInterval` (default
 * {@link DEFAULT_REFRESH_SECONDS}). Installing again is a no-op.
 * @throws SettingsFileError when the file is not a regular file holding a JSON object, or
 *   its statusLine is not an object (nothing is written); SettingsFolderError when its
 *   folder is missing where none is made, or not a folder; LockTimeoutError when another
 *   process holds the settings file's lock for a minute; I/O errors.
 */
export async function installStatusline(settingsPath: string, env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  prepareSettingsFolder(settingsPath, env);
  return withSettingsLock(settingsPath, () => install(settingsPath, env));
}

function install(settingsPath: string, env: NodeJS.ProcessEnv): Outcome {
  const settings = readJsonObject(settingsPath);
  const current = statusLineOf(settingsPath, settings);
  if (isOurs(current)) return { ok: true, message: `backchannel's status line is already installed in ${settingsPath}; nothing changed.` };

  const stashPath = stashPathFor(settingsPath);
  // A stash left from an earlier install whose status line the user has since replaced
  // is out of date: the status line to keep is the one in place now.
  const stash: JsonObject = { settings: settingsPath, settings_existed: settings !== null };
  if (current !== undefined) stash.statusLine = current;
  writeJsonObject(stashPath, stash);

  const refresh = typeof current?.refreshInterval === "number" ? current.refreshInterval : DEFAULT_REFRESH_SECONDS;
  const statusLine: JsonObject = { type: "command", command: `${backchannelCommand(env)} statusline --stash ${shellQuote(stashPath)}` };
  if (typeof current?.padding === "number") statusLine.padding = current.padding;
  statusLine.refreshInterval = refresh;
  // Assigning keeps the key where it was; a new key goes last.
  writeJsonObject(settingsPath, { ...settings, statusLine });

  const kept = current === undefined ? "there was none before" : `it runs the previous one first, kept in ${stashPath}`;
  return {
    ok: true,
    message:
      `Installed backchannel's status line in ${settingsPath} (${kept}).\n` +
      `Claude Code shows it at its next status line refresh (after the next message, or within ${refresh} s).`,
  };
}

/**
 * Takes backchannel's status line out of the settings file at `settingsPath` and puts
 * back the stashed one; removes the file when install created it and it is `{}` again.
 * Refuses (ok false, nothing changed) when the statusLine is no longer backchannel's.
 * @throws SettingsFileError, LockTimeoutError as {@link installStatusline}; Error for an
 *   unreadable stash; I/O errors.
 */
export async function uninstallStatusline(settingsPath: string): Promise<Outcome> {
  // No folder, so no settings file and no stash: nothing to lock, nothing to undo.
  if (!existsSync(dirname(settingsPath))) return { ok: true, message: notInstalled(settingsPath) };
  return withSettingsLock(settingsPath, () => uninstall(settingsPath));
}

function uninstall(settingsPath: string): Outcome {
  const settings = readJsonObject(settingsPath);
  const current = statusLineOf(settingsPath, settings);
  const stashPath = stashPathFor(settingsPath);
  const stash = readStash(stashPath);

  if (!isOurs(current)) {
    if (stash === null) return { ok: true, message: notInstalled(settingsPath) };
    if (JSON.stringify(current) === JSON.stringify(stash.statusLine)) {
      // An uninstall stopped between its two writes: the status line is back already.
      removeStash(stashPath);
      return { ok: true, message: `The previous status line is already back in ${settingsPath}; removed the leftover ${stashPath}.` };
    }
    return {
      ok: false,
      message:
        `the statusLine in ${settingsPath} is no longer backchannel's (it was changed after install), so nothing was changed. ` +
        `The status line from before install is kept in ${stashPath}: put it back by hand if you want it, then delete that file.`,
    };
  }

  const next: JsonObject = { ...settings };
  if (stash?.statusLine !== undefined) next.statusLine = stash.statusLine;
  else delete next.statusLine;
  let message: string;
  if (stash && !stash.settings_existed && Object.keys(next).length === 0) {
    rmSync(settingsPath, { force: true });
    message = `Removed ${settingsPath}, which install had created.`;
  } else {
    writeJsonObject(settingsPath, next);
    message =
      stash === null
        ? `Removed backchannel's status line from ${settingsPath}; ${stashPath} was missing, so there was no previous status line to put back.`
        : stash.statusLine === undefined
          ? `Removed backchannel's status line from ${settingsPath} (there was none before).`
          : `Removed backchannel's status line from ${settingsPath} and put the previous one back.`;
  }
  removeStash(stashPath);
  return { ok: true, message };
}

/**
 * How long a settings file's lock may go untouched before it counts as left by a killed
 * process: 20 s. A person's command can wait, so this is longer than the store's; a
 * waiter gives up after three times as long (a minute), which many installs at once on
 * a busy machine need.
 */
const SETTINGS_LOCK_STALE_MS = 20_000;

/** Runs `action` holding the lock of the settings file at `settingsPath` (its folder must exist). */
export function withSettingsLock<T>(settingsPath: string, action: () => T): Promise<T> {
  return withLock(settingsPath, { staleMs: SETTINGS_LOCK_STALE_MS }, action);
}

function notInstalled(settingsPath: string): string {
  return `backchannel's status line is not installed in ${settingsPath}; nothing changed.`;
}

/**
 * The `statusLine` of a settings file, or `undefined` when it has none.
 * @throws SettingsFileError when it is there but not an object.
 */
function statusLineOf(path: string, settings: JsonObject | null): JsonObject | undefined {
  const value: JsonValue | undefined = settings?.statusLine;
  if (value === undefined) return undefined;
  if (!isJsonObject(value))
    throw new SettingsFileError(path, `its statusLine is ${JSON.stringify(value)}, not an object like {"type": "command", "command": "…"}`);
  return value;
}

/** Whether `statusLine` runs backchannel's status line (for this or any other stash: never stash our own). */
function isOurs(statusLine: JsonObject | undefined): boolean {
  return typeof statusLine?.command === "string" && OUR_COMMAND.test(statusLine.command);
}
