/**
 * The rule for agent hosts installed for their tests only (Claude Code, mcp-use's
 * inspector…, each by an `npm run <host>:install` that `.ci/run` runs): where one is
 * missing its tests are skipped loudly; in CI (`$CI` set) they fail instead.
 */

/**
 * A function that says, once, why `host`'s tests cannot run here: `find()`'s reason, or
 * `undefined` when the pinned version is installed. A reason is printed to stderr.
 * @throws Error (from the returned function) when `$CI` is set and `find()` gave a reason.
 */
export function hostSkipReason(host: string, find: () => string | undefined): () => string | undefined {
  let found: { reason: string | undefined } | undefined;
  return () => {
    if (found === undefined) {
      const reason = find();
      found = { reason };
      if (reason !== undefined && !process.env.CI)
        process.stderr.write(`\n*** SKIPPING the ${host} tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
    }
    if (found.reason !== undefined && process.env.CI) throw new Error(`${found.reason}; CI is set, so the ${host} tests must run`);
    return found.reason;
  };
}
