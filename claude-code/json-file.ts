/**
 * Reading a small JSON file that may not exist (settings.json, the stash). It imports
 * only Node's fs: the status line reads the stash on every run and must start fast.
 */
import { readFileSync } from "node:fs";
import type { JsonValue } from "../core/json.js";

/**
 * The parsed content of the JSON file at `path`.
 * @returns `undefined` when there is no file (a file may hold `null`).
 * @throws SyntaxError when it is not JSON; other I/O errors as they are.
 */
export function readJsonFile(path: string): JsonValue | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return JSON.parse(text) as JsonValue;
}
