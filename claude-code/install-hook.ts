/**
 * `backchannel install hook` and `backchannel uninstall hook`: put the wake hook (the
 * plugin's, for those who keep settings files instead: docs/claude-code-plugin.md) into
 * a Claude Code settings file as a `Stop` hook with `"asyncRewake": true`, and take it
 * out again, leaving every other hook as it was. Both run under the settings file's
 * lock, as the status line's install does (./install.ts).
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { backchannelCommand } from "../core/commands.js";
import type { JsonValue } from "../core/json.js";
import { WAKE_HOOK_TIMEOUT_S } from "../core/limits.js";
import { type Outcome, withSettingsLock } from "./install.js";
import { isJsonObject, prepareSettingsFolder, readJsonObject, SettingsFileError, writeJsonObject, type JsonObject } from "./settings-file.js";

/** A wake hook command of backchannel's, whichever prefix runs it. */
const OUR_HOOK = /(^|\s)hook\s+stop(\s|$)/;

/**
 * Adds the wake hook to the settings file at `settingsPath` (absolute), creating the
 * file when missing (and its folder where `prepareSettingsFolder` may). Installing again is a no-op.
 * @throws SettingsFileError when the file or its `hooks` / `hooks.Stop` is not what
 *   Claude Code reads (nothing is written); SettingsFolderError as `prepareSettingsFolder`;
 *   LockTimeoutError; I/O errors.
 */
export async function installWakeHook(settingsPath: string, env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  prepareSettingsFolder(settingsPath, env);
  return withSettingsLock(settingsPath, () => {
    const settings = readJsonObject(settingsPath) ?? {};
    const stop = stopEntries(settingsPath, settings);
    if (stop.some(isOurs)) return { ok: true, message: `backchannel's wake hook is already installed in ${settingsPath}; nothing changed.` };
    const hook: JsonObject = { type: "command", command: `${backchannelCommand(env)} hook stop`, asyncRewake: true, timeout: WAKE_HOOK_TIMEOUT_S };
    const hooks = isJsonObject(settings.hooks) ? settings.hooks : {};
    writeJsonObject(settingsPath, { ...settings, hooks: { ...hooks, Stop: [...stop, { hooks: [hook] }] } });
    return {
      ok: true,
      message: `Installed backchannel's wake hook (a Stop hook with asyncRewake) in ${settingsPath}. It wakes Claude Code sessions started from now on when an app sends a message.`,
    };
  });
}

/**
 * Takes backchannel's wake hook out of the settings file at `settingsPath`, removing
 * `hooks.Stop` and `hooks` when nothing else is left in them.
 * @throws as {@link installWakeHook}.
 */
export async function uninstallWakeHook(settingsPath: string): Promise<Outcome> {
  const absent = { ok: true, message: `backchannel's wake hook is not installed in ${settingsPath}; nothing changed.` };
  if (!existsSync(dirname(settingsPath))) return absent;
  return withSettingsLock(settingsPath, () => {
    const settings = readJsonObject(settingsPath);
    if (settings === null) return absent;
    const stop = stopEntries(settingsPath, settings);
    const kept = stop.filter((entry) => !isOurs(entry));
    if (kept.length === stop.length) return absent;
    const hooks: JsonObject = { ...(settings.hooks as JsonObject) };
    if (kept.length > 0) hooks.Stop = kept;
    else delete hooks.Stop;
    const next: JsonObject = { ...settings, hooks };
    if (Object.keys(hooks).length === 0) delete next.hooks;
    writeJsonObject(settingsPath, next);
    return { ok: true, message: `Removed backchannel's wake hook from ${settingsPath}.` };
  });
}

/** The `hooks.Stop` matcher entries of `settings`. @throws SettingsFileError when they are not an array. */
function stopEntries(path: string, settings: JsonObject): JsonValue[] {
  const hooks = settings.hooks;
  if (hooks === undefined) return [];
  if (!isJsonObject(hooks)) throw new SettingsFileError(path, `its hooks is ${JSON.stringify(hooks)}, not an object of events`);
  const stop = hooks.Stop;
  if (stop === undefined) return [];
  if (!Array.isArray(stop)) throw new SettingsFileError(path, `its hooks.Stop is ${JSON.stringify(stop)}, not an array`);
  return stop;
}

/** Whether a `hooks.Stop` entry holds backchannel's wake hook. */
function isOurs(entry: JsonValue): boolean {
  if (!isJsonObject(entry) || !Array.isArray(entry.hooks)) return false;
  return entry.hooks.some((hook) => isJsonObject(hook) && typeof hook.command === "string" && OUR_HOOK.test(hook.command));
}
