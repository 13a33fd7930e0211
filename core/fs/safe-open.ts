/**
 * The one way the file store and its read-only readers reach a folder or a file of the
 * data directory. Every read and every write of the layout (core/paths.ts) goes through
 * here, and the rules are checked on every access, as ssh checks `~/.ssh`:
 *
 * - the data directory is a folder of this user that nobody else can write (a link at
 *   the data directory itself is followed: it is the root the user chose);
 * - below it, nothing is reached through a symbolic link: each folder on the way is
 *   checked with lstat, and files are opened with O_NOFOLLOW. A link, a file or
 *   anything else where a folder belongs is moved aside by writers
 *   (`<name>.foreign-<time>`, never followed, never deleted) and refused by readers;
 * - every folder and file belongs to this user and cannot be written by group or
 *   others, else it is refused with {@link UnsafeLayoutError}, whose message names the
 *   `chmod` or `chown` to run;
 * - files are opened with O_NONBLOCK (a named pipe returns at once instead of blocking
 *   the process) and checked with fstat on the open descriptor, so the check and the
 *   read see one file: a regular file, within the size its kind can have.
 *
 * Checking a path and then using it is safe here because of the second and third rules:
 * once every folder above a path is this user's and writable by nobody else, only this
 * user's own processes can change what the path names in between, and they are trusted
 * (SECURITY.md).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { FILE_MODE, FOLDER_MODE, FORBIDDEN_MODE_BITS } from "../paths.js";
import { moveAside } from "./aside.js";
import { makeFolder, syncFolder } from "./durable.js";
import { FileTooLargeError, NotRegularFileError, UnsafeLayoutError } from "./errors.js";

/** How a folder is reached: a writer makes what is missing and moves aside what is in the way; a reader only looks. */
export type FolderAccess = { create: true; warn: (message: string) => void } | { create: false };

/** A reader's access: nothing made, nothing moved. */
export const READ_ONLY: FolderAccess = { create: false };

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NON_BLOCK = constants.O_NONBLOCK ?? 0;
/** This process's user; `undefined` on Windows, which has no POSIX owners and modes and keeps per-user ACLs on the profile folder. */
const UID = process.geteuid?.();

/**
 * Checks every folder from the data directory down to `folder` (the data directory or a
 * folder below it). A writer makes what is missing (mode 0700, durably: ./durable.ts)
 * and moves aside what is not a folder; a reader refuses it.
 * @returns false when a folder is missing and `access` does not create.
 * @throws UnsafeLayoutError; NotRegularFileError (readers: a link or a file where a folder belongs); I/O errors.
 */
export function reachFolder(dataDir: string, folder: string, access: FolderAccess): boolean {
  const below = relative(dataDir, folder);
  if (below.startsWith("..") || isAbsolute(below)) throw new Error(`${folder} is not inside the data directory ${dataDir}`);
  if (!checkDataDir(dataDir, access)) return false;
  let current = dataDir;
  for (const part of below.split(sep).filter((name) => name.length > 0)) {
    current = join(current, part);
    if (!checkFolder(current, access)) return false;
  }
  return true;
}

/** The data directory: followed when it is a link (the user's chosen root), made when missing and creating. */
function checkDataDir(dataDir: string, access: FolderAccess): boolean {
  let stats = statOrNull(dataDir);
  if (!stats) {
    if (!access.create) return false;
    makeFolder(dataDir, { mode: FOLDER_MODE, parents: true });
    stats = statSync(dataDir);
  }
  if (!stats.isDirectory()) throw new NotRegularFileError(dataDir, describeKind(stats), "a folder (the data directory)");
  checkOwnerAndMode(dataDir, stats);
  return true;
}

/** One folder below the data directory, never followed when it is a link. */
function checkFolder(path: string, access: FolderAccess): boolean {
  let stats = lstatOrNull(path);
  let movedAside: string | undefined;
  if (stats && !stats.isDirectory()) {
    if (!access.create) throw new NotRegularFileError(path, describeKind(stats), "a folder");
    movedAside = `${path} should be a folder but was ${describeKind(stats)}: moved it aside to ${moveAside(path, "foreign")}`;
    stats = null;
  }
  if (!stats) {
    if (!access.create) return false;
    try {
      makeFolder(path, { mode: FOLDER_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (movedAside) access.warn(movedAside);
      // Another process made it meanwhile and may not have synced its entry yet (./durable.ts): this one's writes depend on it too.
      syncFolder(dirname(path));
      return checkFolder(path, access);
    }
    // Said only once the folder exists: whoever reads the warning may look at once.
    if (movedAside) access.warn(`${movedAside}, and made a folder in its place`);
    stats = lstatSync(path);
  }
  checkOwnerAndMode(path, stats);
  return true;
}

/**
 * Refuses a folder or file that another user owns or that group or others can write.
 * @throws UnsafeLayoutError naming the command that fixes it.
 */
export function checkOwnerAndMode(path: string, stats: Stats): void {
  if (UID === undefined) return;
  const folder = stats.isDirectory();
  if (stats.uid !== UID) {
    const sudo = UID === 0 ? "" : "sudo ";
    throw new UnsafeLayoutError(
      path,
      "owner",
      `${path} belongs to another user (uid ${stats.uid}), not to you (${describeUser(UID)}): whoever owns it could read or forge ` +
        `messages, so backchannel will not use it. Look at what is in it; then remove it, or make it yours: ` +
        `${sudo}chown ${folder ? "-R " : ""}${UID}:${process.getegid!()} ${shellQuote(path)}`,
    );
  }
  if ((stats.mode & FORBIDDEN_MODE_BITS) !== 0) {
    const mode = (stats.mode & 0o7777).toString(8).padStart(4, "0");
    throw new UnsafeLayoutError(
      path,
      "mode",
      `${path} can be written by other users (mode ${mode}): they could replace what is in it and read or forge messages, ` +
        `so backchannel will not use it. Run: chmod ${(folder ? FOLDER_MODE : FILE_MODE).toString(8)} ${shellQuote(path)}`,
    );
  }
}

/** What a file is opened for: reading, appending (made when missing), or reading and writing in place (made when missing). */
export type FileUse = "read" | "append" | "update";

const OPEN_FLAGS: Record<FileUse, number> = {
  read: constants.O_RDONLY,
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
  update: constants.O_RDWR | constants.O_CREAT,
};

/** An open file of the layout, checked. Close `fd` when done. */
export interface OpenFile {
  fd: number;
  /** Its size when opened. */
  size: number;
}

/**
 * Opens a file of the layout whose folder was reached with {@link reachFolder}: never
 * through a link, never blocking, only a regular file of this user that nobody else can
 * write, of at most `maxBytes`. A file made here is mode 0600.
 * @returns `null` when there is no file and `use` is `read`.
 * @throws NotRegularFileError; FileTooLargeError; UnsafeLayoutError; other I/O errors as they are.
 */
export function openFile(path: string, use: FileUse, maxBytes: number): OpenFile | null {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS[use] | NO_FOLLOW | NON_BLOCK, FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && use === "read") return null;
    if (code === "ELOOP") throw new NotRegularFileError(path, "a symbolic link");
    if (code === "EISDIR") throw new NotRegularFileError(path, "a folder");
    if (code === "ENXIO") throw new NotRegularFileError(path, "a named pipe or a socket");
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(path, describeKind(stats));
    checkOwnerAndMode(path, stats);
    if (stats.size > maxBytes) throw new FileTooLargeError(path, stats.size, maxBytes);
    return { fd, size: stats.size };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * The bytes of the regular file at `path` (see {@link openFile}), read from one descriptor.
 * A file that grew past `maxBytes` since it was opened is refused too.
 * @returns `null` when there is no file.
 * @throws as {@link openFile}.
 */
export function readFileBytes(path: string, maxBytes: number): Buffer | null {
  const file = openFile(path, "read", maxBytes);
  if (!file) return null;
  try {
    // One byte more than the limit, so that a file that grew since the fstat is still caught.
    const buffer = Buffer.allocUnsafe(Math.min(file.size, maxBytes) + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(file.fd, buffer, length, buffer.length - length, length);
    if (length > maxBytes) throw new FileTooLargeError(path, length, maxBytes);
    return buffer.subarray(0, length);
  } finally {
    closeSync(file.fd);
  }
}

/**
 * The text (UTF-8) of the regular file at `path`, as {@link readFileBytes}.
 * @returns `null` when there is no file.
 */
export function readTextFile(path: string, maxBytes: number): string | null {
  return readFileBytes(path, maxBytes)?.toString("utf8") ?? null;
}

/**
 * The first and last `bytes` bytes of the regular file at `path` as text, whatever its
 * size: what a corrupt or oversized file shows at its ends, for salvage.
 * @returns "" when it cannot be read as a regular file of this user.
 */
export function readFileEnds(path: string, bytes: number): string {
  let file: OpenFile | null;
  try {
    file = openFile(path, "read", Number.MAX_SAFE_INTEGER);
  } catch {
    return "";
  }
  if (!file) return "";
  try {
    const head = Buffer.alloc(Math.min(bytes, file.size));
    readSync(file.fd, head, 0, head.length, 0);
    const tailStart = Math.max(head.length, file.size - bytes);
    const tail = Buffer.alloc(file.size - tailStart);
    readSync(file.fd, tail, 0, tail.length, tailStart);
    return `${head.toString("utf8")}\n${tail.toString("utf8")}`;
  } finally {
    closeSync(file.fd);
  }
}

/** The stats of `path` without following a link, or `null` when nothing is there. */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** What a thing on disk is, in words: `a symbolic link`, `a folder`, `a named pipe`, … */
export function describeKind(stats: Stats): string {
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isDirectory()) return "a folder";
  if (stats.isFile()) return "a file";
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  return "a device";
}

function describeUser(uid: number): string {
  try {
    return `${userInfo().username}, uid ${uid}`;
  } catch {
    return `uid ${uid}`;
  }
}

/** `text` quoted for a POSIX shell, so that the command in a message can be pasted as it is. */
function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
