/**
 * Reading a small JSON file that may not exist (settings.json, the stash). It imports
 * only Node's fs: the status line reads the stash on every run and must start fast.
 */
import { readFileSync } from "node:fs";
import type { JsonValue } from "../server/core/json.js";

/**
 * The parsed content of the JSON file at `path`.
 * @returns `null` when there is no file.
 * @throws SyntaxError when it is not JSON; other I/O errors as they are.
 */
export function readJsonFile(path: string): JsonValue | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return JSON.parse(text) as JsonValue;
}
