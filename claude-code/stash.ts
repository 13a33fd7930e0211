/**
 * The stash: where `backchannel install statusline` keeps the status line it replaced,
 * so that `backchannel statusline` can still run it (and show its output first) and
 * `backchannel uninstall statusline` can put it back exactly.
 *
 * It is a file next to the settings file, `backchannel-statusline.<settings file name>`
 * (`~/.claude/backchannel-statusline.settings.json`): one per settings file, so a
 * project's `settings.json` and `settings.local.json` in the same folder do not share
 * one, and nothing is added to settings.json itself (Claude Code may reject keys it
 * does not know). The status line command names the stash on its command line.
 *
 * This module imports only Node's fs and path (and ./json-file.ts): the status line reads the stash on
 * every run and must start fast.
 */
import { rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { CallerError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";
import { NotAJsonFileError, readJsonFile } from "./json-file.js";

/** What a stash file holds. */
export interface Stash {
  /** The settings file whose `statusLine` this was (for the human who finds the file). */
  settings: string;
  /** Whether the settings file existed before install: uninstall removes a file it created once it is `{}` again. */
  settings_existed: boolean;
  /** The `statusLine` before install, as it was; absent when there was none. */
  statusLine?: JsonValue;
}

/** The stash file of the settings file at `settingsPath`. */
export function stashPathFor(settingsPath: string): string {
  return join(dirname(settingsPath), `backchannel-statusline.${basename(settingsPath)}`);
}

/** The file where install keeps its stash holds something else; the message names it and the problem. */
export class NotAStashError extends CallerError {
  override readonly name = "NotAStashError";
  override readonly code = "SETTINGS_FILE";
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} is not a backchannel stash: ${problem}`);
  }
}

/**
 * Reads a stash file.
 * @returns the stash, or `null` when the file does not exist.
 * @throws NotAStashError when it is not a stash; I/O errors as they are.
 */
export function readStash(path: string): Stash | null {
  let value: Partial<Stash> | null | undefined;
  try {
    value = readJsonFile(path) as Partial<Stash> | null | undefined;
  } catch (error) {
    if (error instanceof NotAJsonFileError) throw new NotAStashError(path, error.problem);
    if (!(error instanceof SyntaxError)) throw error;
    throw new NotAStashError(path, `it is not JSON (${error.message})`);
  }
  if (value === undefined) return null;
  if (typeof value !== "object" || value === null || Array.isArray(value) || typeof value.settings_existed !== "boolean") {
    throw new NotAStashError(path, "it has no settings_existed flag");
  }
  return {
    settings: typeof value.settings === "string" ? value.settings : "",
    settings_existed: value.settings_existed,
    ...("statusLine" in value ? { statusLine: value.statusLine } : {}),
  };
}

/**
 * The shell command of the status line kept in the stash at `path`, or `undefined`
 * when there is none (no stash, no previous status line, or a file that cannot be read:
 * a status line must show what it can rather than fail).
 */
export function stashedCommand(path: string): string | undefined {
  try {
    const line = readStash(path)?.statusLine;
    if (typeof line !== "object" || line === null || Array.isArray(line)) return undefined;
    return line.type === "command" && typeof line.command === "string" && line.command.trim() !== "" ? line.command : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the stash file at `path` (nothing when it is gone already). */
export function removeStash(path: string): void {
  rmSync(path, { force: true });
}
