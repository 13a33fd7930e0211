/**
 * `backchannel install hook` and `backchannel uninstall hook`: put the wake hook (the
 * plugin's, for those who keep settings files instead: docs/claude-code-plugin.md) into
 * a Claude Code settings file as a `Stop` hook with `"asyncRewake": true`, and take it
 * out again, leaving every other hook as it was. Both run under the settings file's
 * lock, as the status line's install does (./install.ts).
 *
 * The edits themselves ({@link withHookEntry}, {@link withoutHookEntry}) serve every
 * hooks file of this shape, `{"hooks": {"<Event>": [{"matcher"?, "hooks": [...]}]}}`:
 * Codex's hooks.json has it too (codex/install.ts).
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
    const hook: JsonObject = { type: "command", command: `${backchannelCommand(env)} hook stop`, asyncRewake: true, timeout: WAKE_HOOK_TIMEOUT_S };
    const next = withHookEntry(settingsPath, settings, "Stop", hook, OUR_HOOK);
    if (next === undefined) return { ok: true, message: `backchannel's wake hook is already installed in ${settingsPath}; nothing changed.` };
    writeJsonObject(settingsPath, next);
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
    const next = settings === null ? undefined : withoutHookEntry(settingsPath, settings, "Stop", OUR_HOOK);
    if (next === undefined) return absent;
    writeJsonObject(settingsPath, next);
    return { ok: true, message: `Removed backchannel's wake hook from ${settingsPath}.` };
  });
}

/**
 * `settings` with `hook` added as a new entry of `hooks.<event>` (other events and
 * entries kept, in order), or `undefined` when an entry there already runs a command
 * that `ours` matches.
 * @throws SettingsFileError (naming `path`) when `hooks` or `hooks.<event>` is not what hosts read.
 */
export function withHookEntry(path: string, settings: JsonObject, event: string, hook: JsonObject, ours: RegExp): JsonObject | undefined {
  const entries = hookEntries(path, settings, event);
  if (entries.some((entry) => holdsHook(entry, ours))) return undefined;
  const hooks = isJsonObject(settings.hooks) ? settings.hooks : {};
  return { ...settings, hooks: { ...hooks, [event]: [...entries, { hooks: [hook] }] } };
}

/**
 * `settings` without the entries of `hooks.<event>` that run a command `ours` matches,
 * dropping `hooks.<event>` and `hooks` when nothing else is left in them; `undefined`
 * when there is no such entry.
 * @throws SettingsFileError as {@link withHookEntry}.
 */
export function withoutHookEntry(path: string, settings: JsonObject, event: string, ours: RegExp): JsonObject | undefined {
  const entries = hookEntries(path, settings, event);
  const kept = entries.filter((entry) => !holdsHook(entry, ours));
  if (kept.length === entries.length) return undefined;
  const hooks: JsonObject = { ...(settings.hooks as JsonObject) };
  if (kept.length > 0) hooks[event] = kept;
  else delete hooks[event];
  const next: JsonObject = { ...settings, hooks };
  if (Object.keys(hooks).length === 0) delete next.hooks;
  return next;
}

/** The `hooks.<event>` matcher entries of `settings`. @throws SettingsFileError when they are not an array. */
function hookEntries(path: string, settings: JsonObject, event: string): JsonValue[] {
  const hooks = settings.hooks;
  if (hooks === undefined) return [];
  if (!isJsonObject(hooks)) throw new SettingsFileError(path, `its hooks is ${JSON.stringify(hooks)}, not an object of events`);
  const entries = hooks[event];
  if (entries === undefined) return [];
  if (!Array.isArray(entries)) throw new SettingsFileError(path, `its hooks.${event} is ${JSON.stringify(entries)}, not an array`);
  return entries;
}

/** Whether a matcher entry holds a command hook whose command `ours` matches. */
function holdsHook(entry: JsonValue, ours: RegExp): boolean {
  if (!isJsonObject(entry) || !Array.isArray(entry.hooks)) return false;
  return entry.hooks.some((hook) => isJsonObject(hook) && typeof hook.command === "string" && ours.test(hook.command));
}
