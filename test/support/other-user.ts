/**
 * A second, real user for the tests that need another uid (an attacker who shares the
 * machine): `nobody`, reached with util-linux's `setpriv`. That needs root, which CI
 * has; elsewhere those tests are skipped with a loud note.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from "node:child_process";

/** The other user: `nobody` and its group. */
export const OTHER_USER = { uid: 65534, gid: 65534, name: "nobody" } as const;

/** The command line prefix that runs a program as {@link OTHER_USER}. */
export const AS_OTHER_USER = ["setpriv", `--reuid=${OTHER_USER.uid}`, `--regid=${OTHER_USER.gid}`, "--clear-groups"] as const;

/**
 * Why the tests cannot run a process as another user here, or `undefined` when they can.
 * @throws Error when `$CI` is set and they cannot: in CI those tests must run.
 */
export function otherUserSkipReason(): string | undefined {
  let reason: string | undefined;
  if (process.platform !== "linux" || process.getuid?.() !== 0) reason = "running a process as another user needs root on Linux";
  else {
    try {
      execFileSync(AS_OTHER_USER[0], [...AS_OTHER_USER.slice(1), "true"], { stdio: "ignore" });
    } catch {
      reason = "setpriv (util-linux) cannot run a process as nobody here";
    }
  }
  if (reason === undefined) return undefined;
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the two-user tests must run`);
  process.stderr.write(`\n*** SKIPPING the two-user tests: ${reason}. They run, and must pass, in CI (as root). ***\n\n`);
  return reason;
}

/** Runs `script` with /bin/sh as {@link OTHER_USER}; its output, whatever its exit code. */
export function shellAsOtherUser(script: string): SpawnSyncReturns<string> {
  return spawnSync(AS_OTHER_USER[0], [...AS_OTHER_USER.slice(1), "/bin/sh", "-c", script], { encoding: "utf8" });
}
