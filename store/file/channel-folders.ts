/**
 * The channel folders of a data directory: made on first use, listed, marked as in
 * use, removed whole. Every folder is reached through core/fs/safe-open.ts.
 *
 * Invariants:
 * - no path is built from a channel id before the id is checked (core/paths.ts);
 * - a channel folder, `channels/` and the data directory are real folders of this user
 *   that nobody else can write: anything else in place of a folder below the data
 *   directory (a file, a symbolic link) is moved aside, never followed;
 * - a channel's last activity is its folder's mtime, which only the file system's clock
 *   sets: every lock taken in the folder changes it, and a poll marks the folder in use
 *   by adding and removing an entry, never by setting a time from this process's clock;
 * - a removal is atomic for everyone else: the folder is renamed away first, so a
 *   channel is either whole or gone, never half deleted; what is then deleted is only
 *   what the renamed folder holds: links in it are removed, never followed.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { isChannelId } from "../../core/ids.js";
import { channelDir, channelsDir } from "../../core/paths.js";
import type { ChannelInfo } from "../store.js";
import { moveAside } from "../../core/fs/aside.js";
import { syncFolder } from "../../core/fs/durable.js";
import { describeKind, type FolderAccess, lstatOrNull, READ_ONLY, reachFolder } from "../../core/fs/safe-open.js";

/** How often a poll marks its channel as in use, per process and channel, at most (and at least four times per TTL). */
const TOUCH_INTERVAL_MS = 10 * 60 * 1000;

/** The prefix of the entry a touch adds and removes at once; one left by a killed process is swept with old temporary files. */
export const TOUCH_PREFIX = ".touch-";

/** The channel folders of one data directory. */
export class ChannelFolders {
  private readonly touched = new Map<string, number>();
  /** How often a poll marks its channel in use, at most: every 10 minutes, and at least four times per channel TTL. */
  readonly touchIntervalMs: number;
  /** How writers reach folders: made when missing, what is in the way moved aside and reported. */
  readonly writer: FolderAccess;

  /**
   * @param dataDir the data directory.
   * @param channelTtlMs how long an unused channel lives (a channel in use is marked at least four times as often).
   * @param warn where a foreign thing moved aside is reported.
   */
  constructor(
    readonly dataDir: string,
    channelTtlMs: number,
    readonly warn: (message: string) => void,
  ) {
    this.touchIntervalMs = Math.min(TOUCH_INTERVAL_MS, channelTtlMs / 4);
    this.writer = { create: true, warn };
  }

  /**
   * Makes sure the channel folder, and every folder above it, is a real folder of this
   * user (mode 0700, made when needed). Anything else in the way is moved aside to
   * `<name>.foreign-<timestamp>`, never followed, and reported.
   * @returns the folder's path.
   * @throws InvalidChannelIdError; UnsafeLayoutError; I/O errors.
   */
  ensure(channelId: string): string {
    const dir = channelDir(this.dataDir, channelId);
    reachFolder(this.dataDir, dir, this.writer);
    return dir;
  }

  /**
   * The channel folder when it exists, checked as {@link ensure} does, but never made or
   * repaired (for readers).
   * @returns its path, or `null` when there is no such channel.
   * @throws InvalidChannelIdError; UnsafeLayoutError; NotRegularFileError when a folder of the way is not one; I/O errors.
   */
  find(channelId: string): string | null {
    const dir = channelDir(this.dataDir, channelId);
    return reachFolder(this.dataDir, dir, READ_ONLY) ? dir : null;
  }

  /**
   * Marks a channel as in use for the idle sweep: adds and removes an entry in its
   * folder, so that the file system stamps the folder's mtime with its own clock. At most
   * once per touch interval per process and channel (timed by the monotonic clock);
   * best effort: a folder removed meanwhile is not an error.
   */
  markInUse(dir: string): void {
    const now = performance.now();
    const last = this.touched.get(dir);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    this.touched.set(dir, now);
    try {
      touchFolder(dir);
    } catch {
      // The channel was removed meanwhile; the next poll makes it again.
    }
  }

  /** Every channel folder, with its last activity (the folder's mtime, set by the file system's clock). */
  list(): Promise<ChannelInfo[]> {
    return listChannelFolders(this.dataDir, this.writer);
  }

  /** The total size of the state documents of channel `channelId` (regular files `state.<name>.json`; links are not followed). */
  async stateBytes(channelId: string): Promise<number> {
    const dir = this.find(channelId);
    if (!dir) return 0;
    let bytes = 0;
    for (const name of (await readdir(dir)).filter((entry) => entry.startsWith("state.") && entry.endsWith(".json"))) {
      const stats = lstatOrNull(join(dir, name));
      if (stats?.isFile()) bytes += stats.size;
    }
    return bytes;
  }

  /**
   * The file system's current time, read from the data directory's own clock (an entry
   * added to and removed from `channels/` stamps its mtime): what the idle sweep compares
   * folder times with, so that no process's clock decides what is idle.
   */
  fileSystemNow(): number {
    const root = channelsDir(this.dataDir);
    reachFolder(this.dataDir, root, this.writer);
    touchFolder(root);
    return lstatSync(root).mtimeMs;
  }

  /**
   * Removes a channel folder and everything in it; nothing when it does not exist. A link
   * or a file in the channel's place is moved aside rather than removed.
   * @throws InvalidChannelIdError; UnsafeLayoutError; I/O errors.
   */
  async remove(channelId: string): Promise<void> {
    const dir = channelDir(this.dataDir, channelId);
    const root = channelsDir(this.dataDir);
    if (!reachFolder(this.dataDir, root, this.writer)) return;
    const stats = lstatOrNull(dir);
    if (!stats) return;
    if (!stats.isDirectory()) {
      this.warn(`${dir} should be a channel folder but was ${describeKind(stats)}: moved it aside to ${moveAside(dir, "foreign")}`);
      return;
    }
    const trash = join(root, `.removed-${channelId}-${randomBytes(4).toString("hex")}`);
    try {
      await rename(dir, trash);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    syncFolder(root);
    this.touched.delete(dir);
    // rm lstats every entry and unlinks links rather than following them; the trash
    // itself is the real folder checked above, in a folder nobody else can write.
    await rm(trash, { recursive: true, force: true });
  }
}

/** Adds and removes an entry in `dir`, so that the file system sets the folder's mtime to its own now. */
function touchFolder(dir: string): void {
  const entry = join(dir, `${TOUCH_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
  mkdirSync(entry);
  rmdirSync(entry);
}

/**
 * Every channel folder of `dataDir`, with its last activity (the folder's mtime, set by
 * the file system's clock); `channels/` is reached with `access` (READ_ONLY for readers:
 * nothing made or moved aside).
 * @throws UnsafeLayoutError; NotRegularFileError; I/O errors.
 */
export async function listChannelFolders(dataDir: string, access: FolderAccess): Promise<ChannelInfo[]> {
  const root = channelsDir(dataDir);
  if (!reachFolder(dataDir, root, access)) return [];
  const channels: ChannelInfo[] = [];
  for (const name of (await readdir(root)).filter(isChannelId)) {
    const stats = lstatOrNull(join(root, name));
    if (stats?.isDirectory()) channels.push({ id: name, lastActivity: stats.mtime });
  }
  return channels;
}
