/**
 * A real ext4 file system on a loop device, and power cuts of it: for tests of what an
 * acknowledgement promises after the power goes.
 *
 * A cut copies the loop device's backing file at that instant, while the file system is
 * still mounted: the copy holds exactly what had reached the device (what a disk holds
 * when the power goes), and none of what ext4 still kept in memory (its journal's
 * running transaction, dirty pages). The copy is then mounted on a loop device of its
 * own, which replays its journal as a boot after a power cut would. The live file
 * system is mounted with `commit=600`, so that its periodic journal commit (every 5 s by
 * default) does not make durable, between an answer and its cut, what the code under
 * test left in memory. Needs root on Linux (losetup, mount).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Why the power-cut tests cannot run here, or `false` when they can. @throws under `CI` when they cannot: CI must run them. */
export function ext4CutSkip(): string | false {
  let reason: string | false = false;
  if (process.platform !== "linux" || process.getuid?.() !== 0) reason = "needs root on Linux to mount an ext4 image on a loop device";
  else {
    try {
      execFileSync("mkfs.ext4", ["-V"], { stdio: "ignore" });
      execFileSync("losetup", ["--version"], { stdio: "ignore" });
    } catch {
      reason = "needs mkfs.ext4 (e2fsprogs) and losetup (util-linux)";
    }
  }
  if (reason && process.env.CI) throw new Error(`${reason}; CI is set, so the power-cut tests must run`);
  if (reason) process.stderr.write(`\n*** SKIPPING the power-cut tests: ${reason}. They run, and must pass, in CI (as root). ***\n\n`);
  return reason;
}

/** A mounted ext4 file system that can be cut. */
export interface Ext4Disk {
  /** Where it is mounted. */
  at: string;
  /**
   * The power cut: what the device holds right now, mounted (its journal replayed) at a
   * folder of its own, which is returned. The live file system goes on unchanged.
   */
  cut(): string;
  /** Unmounts the file system and every cut, and removes their images. */
  close(): Promise<void>;
}

/** A fresh ext4 file system of `megabytes` on a loop device, mounted at a new folder. */
export async function makeExt4Disk(megabytes = 64): Promise<Ext4Disk> {
  const root = await mkdtemp(join(tmpdir(), "backchannel-ext4-"));
  const mounted: { at: string; device: string }[] = [];
  const mountImage = (image: string, at: string, options: string[]) => {
    execFileSync("mkdir", ["-p", at]);
    const device = execFileSync("losetup", ["--find", "--show", image], { encoding: "utf8" }).trim();
    try {
      execFileSync("mount", ["-t", "ext4", ...options, device, at], { stdio: "ignore" });
    } catch (error) {
      execFileSync("losetup", ["--detach", device]);
      throw error;
    }
    mounted.push({ at, device });
  };
  const close = async () => {
    for (const { at, device } of mounted.splice(0).reverse()) {
      execFileSync("umount", [at]);
      execFileSync("losetup", ["--detach", device]);
    }
    await rm(root, { recursive: true, force: true });
  };
  try {
    const image = join(root, "disk.img");
    execFileSync("truncate", ["--size", `${megabytes}M`, image]);
    execFileSync("mkfs.ext4", ["-q", "-F", image]);
    const at = join(root, "live");
    mountImage(image, at, ["-o", "commit=600"]);
    let cuts = 0;
    return {
      at,
      cut() {
        const copy = join(root, `cut-${++cuts}.img`);
        execFileSync("cp", ["--sparse=always", image, copy]);
        const cutAt = join(root, `cut-${cuts}`);
        mountImage(copy, cutAt, []);
        return cutAt;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
