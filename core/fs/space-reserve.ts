/**
 * Disk space kept for writes that must not fail on a full disk (the file store's
 * acknowledgements, store/file/queue-log.ts): a file of {@link RESERVE_BYTES} zeros.
 * On a disk with no free page, such a write still needs a page or two; when it fails for
 * lack of room, the reserve is emptied and it runs once more. Other writers take the room
 * back first ({@link SpaceReserve.refill}), so they are refused before they can use it.
 *
 * The reserve holds nothing: emptying it, losing it or a reserve of any size is never
 * an error of a call, only a warning; it is reached as every file of the layout (no link
 * followed, this user's, 0600: ./safe-open.ts).
 */
import { closeSync, ftruncateSync } from "node:fs";
import { lstatOrNull, openFile } from "./safe-open.js";
import { isOutOfSpace, writeAll } from "./write-all.js";

/** The reserve's size: 16 pages, room for a lock's record, an ack and a small queue's compaction with some to spare. */
export const RESERVE_BYTES = 64 * 1024;

/** One reserve file (the file store keeps one per data directory, core/paths.ts `spaceReserveFile`). */
export class SpaceReserve {
  /** Whether a reserve that cannot be used (not a regular file, …) was reported: once per process. */
  private reported = false;

  /**
   * @param path the reserve's file, in a folder reached through ./safe-open.ts.
   * @param warn where an emptied or unusable reserve is reported.
   */
  constructor(
    private readonly path: string,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Runs `action`; when it fails for lack of room and the reserve held any, empties the
   * reserve and runs `action` once more, then takes back what room is left. `action` must
   * leave nothing changed when it fails (./write-all.ts: a write is whole or undone).
   * @throws what `action` throws.
   */
  async withRoom<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (!isOutOfSpace(error) || !this.release()) throw error;
      this.warn(`the disk holding ${this.path} is full: its reserve was used to acknowledge; free some space on that disk`);
      try {
        return await action();
      } finally {
        this.refill();
      }
    }
  }

  /**
   * Fills the reserve up to {@link RESERVE_BYTES}; a disk without room keeps what fit.
   * One lstat when it is whole (whoever emptied it, in any process). Never throws.
   */
  refill(): void {
    try {
      const stats = lstatOrNull(this.path);
      if (stats?.isFile() && stats.size >= RESERVE_BYTES) return;
      const file = openFile(this.path, "update", Number.MAX_SAFE_INTEGER);
      if (!file) return;
      try {
        if (file.size < RESERVE_BYTES) writeAll(file.fd, Buffer.alloc(RESERVE_BYTES - file.size), this.path, file.size);
      } finally {
        closeSync(file.fd);
      }
    } catch (error) {
      if (!isOutOfSpace(error)) this.report(error);
    }
  }

  /** Empties the reserve. @returns whether it held any room. */
  private release(): boolean {
    try {
      const file = openFile(this.path, "update", Number.MAX_SAFE_INTEGER);
      if (!file) return false;
      try {
        if (file.size === 0) return false;
        ftruncateSync(file.fd, 0);
        return true;
      } finally {
        closeSync(file.fd);
      }
    } catch (error) {
      this.report(error);
      return false;
    }
  }

  private report(error: unknown): void {
    if (this.reported) return;
    this.reported = true;
    this.warn(
      `the space reserve ${this.path} cannot be used (${error instanceof Error ? error.message : String(error)}); acknowledgements on a full disk may fail`,
    );
  }
}
