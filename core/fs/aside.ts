/**
 * Moving a file of the layout aside: what is in the way (a corrupt queue, a link or a
 * file where a channel folder belongs) is renamed, never deleted, so that nothing a
 * person may want back is lost.
 */
import { renameSync } from "node:fs";

/**
 * Renames `path` to `<path>.<why>-<timestamp>` (e.g. `ui.json.corrupt-2026-11-29T12-00-00-000Z`).
 * @returns the new path.
 * @throws I/O errors of the rename.
 */
export function moveAside(path: string, why: "corrupt" | "foreign"): string {
  const aside = `${path}.${why}-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  renameSync(path, aside);
  return aside;
}
