/**
 * What counts as message data: a JSON value, nested at most {@link MAX_JSON_DEPTH}
 * levels deep. The depth bound keeps every later step (validation, serialisation, the
 * app's rendering) far from the stack's limit, whoever sent the value.
 */
import { CallerError } from "./errors.js";

/** Any value JSON can carry. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The deepest nesting of arrays and objects that message data may have. */
export const MAX_JSON_DEPTH = 64;

/** Thrown when message data is not JSON or is nested too deeply. */
export class InvalidDataError extends CallerError {
  override readonly name = "InvalidDataError";
  override readonly code = "INVALID_DATA";
  constructor(reason: string) {
    super(`invalid data: ${reason}; send plain JSON nested at most ${MAX_JSON_DEPTH} levels deep`);
  }
}

/**
 * Why `value` is not acceptable message data, or `undefined` when it is: plain JSON
 * (null, booleans, finite numbers, strings, arrays, plain objects) nested at most
 * `maxDepth` levels. Walks iteratively, so any depth is safe to check.
 */
export function jsonProblem(value: unknown, maxDepth: number = MAX_JSON_DEPTH): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item === "string" || typeof item === "boolean") continue;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return "numbers must be finite";
      continue;
    }
    if (typeof item !== "object") return `a ${typeof item} is not JSON`;
    if (depth >= maxDepth) return `nested more than ${maxDepth} levels deep`;
    const children = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) stack.push([child, depth + 1]);
  }
  return undefined;
}

/** True when `value` is acceptable message data (see {@link jsonProblem}). */
export function isJsonValue(value: unknown, maxDepth: number = MAX_JSON_DEPTH): value is JsonValue {
  return jsonProblem(value, maxDepth) === undefined;
}
