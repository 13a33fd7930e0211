/**
 * The app shell's own events on a channel, besides those of the app it runs (which the
 * agent writes itself): `ready` once the app's scripts ran, as the reader sends it, and
 * `app_error` when the app fails. Types only: the shell imports them with `import type`.
 */

/** The data of `app_error` (app → agent): what went wrong in the agent's app, so the agent can fix it. */
export type AppErrorData = {
  /** The error as the app's author would read it, e.g. `TypeError: Cannot read properties of null (reading 'x')`. */
  message: string;
  /** The line of the agent's HTML fragment it happened on, or null when it cannot be placed. */
  line: number | null;
};
