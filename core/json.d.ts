/**
 * What counts as message data: a JSON value, nested at most {@link MAX_JSON_DEPTH}
 * levels deep. The depth bound keeps every later step (validation, serialisation, the
 * app's rendering) far from the stack's limit, whoever sent the value.
 */
import { CallerError } from "./errors.js";
/** Any value JSON can carry. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | {
      [key: string]: JsonValue;
    };
/** The deepest nesting of arrays and objects that message data may have. */
export declare const MAX_JSON_DEPTH = 64;
/** Thrown when message data is not JSON or is nested too deeply. */
export declare class InvalidDataError extends CallerError {
  readonly name = "InvalidDataError";
  constructor(reason: string);
}
/**
 * Why `value` is not acceptable message data, or `undefined` when it is: plain JSON
 * (null, booleans, finite numbers, strings, arrays, plain objects) nested at most
 * `maxDepth` levels. Walks iteratively, so any depth is safe to check.
 */
export declare function jsonProblem(value: unknown, maxDepth?: number): string | undefined;
/** True when `value` is acceptable message data (see {@link jsonProblem}). */
export declare function isJsonValue(value: unknown, maxDepth?: number): value is JsonValue;
