/**
 * Where a long-running process's notes for people go: one line on stderr (stdout is the
 * protocol's on stdio). Every module that reports takes a `warn` function, defaulting
 * to this one, so that tests and library users can catch the lines instead.
 */

/** A sink for one line of news for people (no trailing newline). */
export type Warn = (message: string) => void;

/** Writes `backchannel: <message>` as one line on stderr. */
export const warnOnStderr: Warn = (message) => {
  process.stderr.write(`backchannel: ${message}\n`);
};
