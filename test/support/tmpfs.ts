/**
 * Real small disks for fault tests: a tmpfs mounted (as root, on Linux) at a new folder,
 * filled to a chosen number of free bytes.
 */
import { execFileSync } from "node:child_process";
import { statfsSync } from "node:fs";
import { readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why tmpfs tests cannot run here, or `false` when they can (root on Linux). */
export const TMPFS_SKIP: string | false = process.platform === "linux" && process.getuid?.() === 0 ? false : "needs root on Linux to mount a tmpfs";

/**
 * The skip option of a tmpfs test: `false` where it can run; elsewhere the reason, said
 * loudly, except under `CI=true`, where it throws: CI must run these tests.
 */
export function tmpfsSkip(): string | false {
  if (TMPFS_SKIP && process.env.CI) throw new Error(`${TMPFS_SKIP}; CI is set, so the tmpfs tests must run`);
  return TMPFS_SKIP;
}

/** Mounts a tmpfs of `size` (e.g. "4m") at a new folder; undefined where this machine does not allow it. */
export function mountTmpfs(size: string): string | undefined {
  const at = execFileSync("mktemp", ["-d", join(tmpdir(), "backchannel-tmpfs-XXXXXX")], { encoding: "utf8" }).trim();
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", at], { stdio: "ignore" });
    return at;
  } catch {
    return undefined;
  }
}

/** Unmounts a tmpfs made by {@link mountTmpfs}. */
export function unmount(at: string): void {
  execFileSync("umount", [at], { stdio: "ignore" });
}

/** The bytes free on the file system holding `at`. */
export function freeBytes(at: string): number {
  const stats = statfsSync(at);
  return stats.bavail * stats.bsize;
}

/** Where the filler files of {@link fillDisk} are, so that {@link freeDisk} can remove them. */
const FILLER_PREFIX = "filler-";

/**
 * Fills the file system at `at` until about `leaveBytes` are free (to the page), with
 * filler files in `at`; `leaveBytes` 0 fills it until not even one more page fits.
 */
export async function fillDisk(at: string, leaveBytes = 0): Promise<void> {
  const big = freeBytes(at) - leaveBytes;
  if (big > 0) await writeFile(join(at, `${FILLER_PREFIX}big`), Buffer.alloc(big)).catch(() => undefined);
  if (leaveBytes > 0) return;
  for (let i = 0; ; i++) {
    try {
      await writeFile(join(at, `${FILLER_PREFIX}${i}`), Buffer.alloc(4096));
    } catch {
      await rm(join(at, `${FILLER_PREFIX}${i}`), { force: true });
      return;
    }
  }
}

/** Removes the filler files of {@link fillDisk}. */
export async function freeDisk(at: string): Promise<void> {
  for (const name of await readdir(at)) if (name.startsWith(FILLER_PREFIX)) await rm(join(at, name), { force: true });
}
