/**
 * Whole-file replacement that a reader without a lock can never see half done.
 */
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";

/** The suffix of temporary files; the idle sweep removes old ones left by killed processes. */
export const TEMP_SUFFIX = ".tmp";

/**
 * Writes `text` to `path` atomically and durably: a temporary file in the same folder
 * (mode 0600) is written, fsynced and renamed over `path`. On any error the temporary
 * file is removed and `path` keeps its previous content.
 * @throws the underlying I/O error (ENOSPC, EROFS, EACCES, …).
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}-${randomBytes(4).toString("hex")}${TEMP_SUFFIX}`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
