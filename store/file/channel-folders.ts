/**
 * The channel folders of a data directory: made on first use, listed, marked as in
 * use, removed whole.
 *
 * Invariants:
 * - no path is built from a channel id before the id is checked (core/paths.ts);
 * - a channel folder is a real folder: anything else in its place (a file, a symbolic
 *   link) is moved aside, never followed;
 * - a removal is atomic for everyone else: the folder is renamed away first, so a
 *   channel is either whole or gone, never half deleted.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, type Stats } from "node:fs";
import { lstat, readdir, rename, rm, utimes } from "node:fs/promises";
import { join } from "node:path";
import { isChannelId } from "../../core/ids.js";
import { channelDir, channelsDir } from "../../core/paths.js";
import type { ChannelInfo } from "../store.js";
import { moveAside } from "./aside.js";

/** How often a poll marks its channel as in use (for the idle sweep), per process and channel. */
const TOUCH_INTERVAL_MS = 10 * 60 * 1000;

/** The channel folders of one data directory. */
export class ChannelFolders {
  private readonly touched = new Map<string, number>();

  /**
   * @param dataDir the data directory.
   * @param warn where a foreign thing moved aside is reported.
   */
  constructor(
    readonly dataDir: string,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Makes sure the channel folder exists as a real folder (mode 0700, created with the
   * data directory when needed). Anything else in its place is moved aside to
   * `<id>.foreign-<timestamp>`, never followed, and reported.
   * @returns the folder's path.
   * @throws InvalidChannelIdError; I/O errors.
   */
  ensure(channelId: string): string {
    const dir = channelDir(this.dataDir, channelId);
    let stats: Stats | undefined;
    try {
      stats = lstatSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (stats?.isDirectory()) return dir;
    if (stats) {
      const aside = moveAside(dir, "foreign");
      this.warn(`${dir} should be a channel folder but was a ${stats.isSymbolicLink() ? "symbolic link" : "file"}: moved it aside to ${aside}`);
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** Marks a channel as in use for the idle sweep (its folder's mtime); at most once per {@link TOUCH_INTERVAL_MS} per process. */
  markInUse(dir: string): void {
    const now = Date.now();
    if (now - (this.touched.get(dir) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.touched.set(dir, now);
    utimes(dir, new Date(now), new Date(now)).catch(() => undefined);
  }

  /** Every channel folder, with its last activity (the folder's mtime). */
  async list(): Promise<ChannelInfo[]> {
    let names: string[];
    try {
      names = await readdir(channelsDir(this.dataDir));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const channels: ChannelInfo[] = [];
    for (const name of names.filter(isChannelId)) {
      const stats = await lstat(join(channelsDir(this.dataDir), name)).catch(() => undefined);
      if (stats?.isDirectory()) channels.push({ id: name, lastActivity: stats.mtime });
    }
    return channels;
  }

  /** Removes a channel folder and everything in it; nothing when it does not exist. */
  async remove(channelId: string): Promise<void> {
    const dir = channelDir(this.dataDir, channelId);
    const trash = join(channelsDir(this.dataDir), `.removed-${channelId}-${randomBytes(4).toString("hex")}`);
    try {
      await rename(dir, trash);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    await rm(trash, { recursive: true, force: true });
    this.touched.delete(dir);
  }
}
