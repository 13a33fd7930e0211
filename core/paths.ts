/**
 * The file layout of the data directory (docs/ARCHITECTURE.md, "On disk"), shared by the store and the watcher:
 *
 *     <data dir>/channels/<channel id>/ui.json      agent → app queue
 *     <data dir>/channels/<channel id>/agent.json   app → agent queue
 *     <data dir>/channels/<channel id>/ui.seq, agent.seq   each queue's mark (../store/file/queue-log.ts)
 *     <data dir>/channels/<channel id>/ui.readers, …       each queue's readers' cursors (../store/readers.ts)
 *     <data dir>/channels/<channel id>/state.<name>.json   per-channel state of apps (the reader's document, …)
 *     <data dir>/sessions/<session key>.json   a host session's channels and wall (see ../store/file/session-files.ts)
 *     <data dir>/apps/<name>.json              an app the agent wrote and the user kept (see ../store/file/saved-apps.ts)
 *     <data dir>/watchers/<session key>.json   which session watcher waits for a session (see ../watcher/session-claim.ts)
 *     <data dir>/principals/<namespace>/       a remote principal's own channels, sessions and apps, in this same layout
 *     <file>.lock                                   the lock of a file: its holder's record, there while held (./fs/lock.ts)
 *
 * Every path under `channels/` is built here, and only from a checked channel id, so
 * no caller can name a file outside its channel folder.
 *
 * The layout's permission rules (checked on every access by core/fs/safe-open.ts, as
 * ssh checks `~/.ssh`): every folder and file belongs to the user, and none can be
 * written by group or others; folders are made {@link FOLDER_MODE}, files {@link FILE_MODE}.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { CallerError } from "./errors.js";
import { assertAppName, assertChannelId, assertPrincipalNamespace, assertSessionKey, assertStateName } from "./ids.js";

/** The mode of every folder the store makes: the user's alone. */
export const FOLDER_MODE = 0o700;

/** The mode of every file the store makes: the user's alone. */
export const FILE_MODE = 0o600;

/** Mode bits that no folder or file of the layout may have: writable by group or others. */
export const FORBIDDEN_MODE_BITS = 0o022;

/** The two queues of a channel, named by who reads them: `ui` is read by the app, `agent` by the agent. */
export const QUEUE_NAMES = ["ui", "agent"] as const;

/** `"ui"` (agent → app) or `"agent"` (app → agent). */
export type QueueName = (typeof QUEUE_NAMES)[number];

/**
 * A default path needed the user's home folder, and this process has none: `HOME` is
 * unset and its uid has no entry in the password database (a container's arbitrary uid).
 * The message names what to set instead.
 */
export class NoHomeFolderError extends CallerError {
  override readonly name = "NoHomeFolderError";
  override readonly code = "NO_HOME_FOLDER";
  constructor(
    /** What the home folder was needed for, e.g. "the data directory". */
    readonly what: string,
    /** What to set instead, e.g. "set BACKCHANNEL_HOME to a folder of yours". */
    readonly remedy: string,
  ) {
    super(`no home folder to find ${what} in (HOME is unset and uid ${process.getuid?.() ?? "?"} has no entry in the password database): ${remedy}`);
  }
}

/**
 * The user's home folder: `$HOME`, else the password database's entry for this uid.
 * @returns `undefined` when there is neither.
 */
export function homeFolder(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The data directory: `$BACKCHANNEL_HOME` when set, else the per-user state directory
 * (`$XDG_STATE_HOME/backchannel` or `~/.local/state/backchannel` on Linux and other
 * Unixes, `~/Library/Application Support/backchannel` on macOS,
 * `%LOCALAPPDATA%\backchannel` on Windows). Every process of the user resolves the same one.
 * The home folder is looked up only when the path needs it.
 * @param home the home folder. Default: {@link homeFolder}.
 * @throws NoHomeFolderError when the path needs a home folder and there is none.
 */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home?: string): string {
  if (env.BACKCHANNEL_HOME) return env.BACKCHANNEL_HOME;
  if (platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "backchannel");
  if (platform !== "darwin" && platform !== "win32" && env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "backchannel");
  const base = home ?? homeFolder();
  if (base === undefined) throw new NoHomeFolderError("the data directory", "set BACKCHANNEL_HOME to a folder of yours");
  if (platform === "darwin") return join(base, "Library", "Application Support", "backchannel");
  if (platform === "win32") return join(base, "AppData", "Local", "backchannel");
  return join(base, ".local", "state", "backchannel");
}

/** {@link resolveDataDir} for a help text: the path, or why there is none. Never throws. */
export function describeDefaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return resolveDataDir(env);
  } catch (error) {
    return `none here (${(error as Error).message})`;
  }
}

/** The folder that holds one folder per channel. */
export function channelsDir(dataDir: string): string {
  return join(dataDir, "channels");
}

/**
 * The folder of one channel.
 * @throws InvalidChannelIdError before building any path when `channelId` is not valid.
 */
export function channelDir(dataDir: string, channelId: string): string {
  return join(channelsDir(dataDir), assertChannelId(channelId));
}

/** The file name of a queue inside its channel folder (`ui.json` or `agent.json`). */
export function queueFileName(queue: QueueName): string {
  return `${queue}.json`;
}

/**
 * The file of one queue of one channel.
 * @throws InvalidChannelIdError when `channelId` is not valid.
 */
export function queueFile(dataDir: string, channelId: string, queue: QueueName): string {
  return join(channelDir(dataDir, channelId), queueFileName(queue));
}

/**
 * The mark of one queue of one channel, `<queue>.seq` beside its log (../store/file/queue-log.ts).
 * @throws InvalidChannelIdError when `channelId` is not valid.
 */
export function queueMarkFile(dataDir: string, channelId: string, queue: QueueName): string {
  return join(channelDir(dataDir, channelId), `${queue}.seq`);
}

/**
 * The cursors of one queue's readers, `<queue>.readers` beside its mark (../store/file/queue-log.ts).
 * @throws InvalidChannelIdError when `channelId` is not valid.
 */
export function queueReadersFile(dataDir: string, channelId: string, queue: QueueName): string {
  return join(channelDir(dataDir, channelId), `${queue}.readers`);
}

/** The lock path of a file of the layout, `<file>.lock`: its holder's record, there while the lock is held (./fs/lock.ts). */
export function lockPathOf(path: string): string {
  return `${path}.lock`;
}

/**
 * The file of a per-channel state document, `state.<name>.json`.
 * @throws InvalidChannelIdError when `channelId` is not valid; Error when `name` does not match STATE_NAME_PATTERN.
 */
export function stateFile(dataDir: string, channelId: string, name: string): string {
  const file = `state.${assertStateName(name)}.json`;
  return join(channelDir(dataDir, channelId), file);
}

/** The folder that holds one file per host session. */
export function sessionsDir(dataDir: string): string {
  return join(dataDir, "sessions");
}

/**
 * The file of one host session, `sessions/<key>.json`.
 * @throws Error when `key` does not match SESSION_KEY_PATTERN.
 */
export function sessionFile(dataDir: string, key: string): string {
  return join(sessionsDir(dataDir), `${assertSessionKey(key)}.json`);
}

/** The folder of the session watchers' claims, `watchers/`. */
export function watchersDir(dataDir: string): string {
  return join(dataDir, "watchers");
}

/**
 * The claim file of a session's watcher, `watchers/<key>.json`: kept beside the
 * store's files whichever store holds the channels, as it is only this machine's.
 * @throws Error when `key` does not match SESSION_KEY_PATTERN.
 */
export function watcherClaimFile(dataDir: string, key: string): string {
  return join(watchersDir(dataDir), `${assertSessionKey(key)}.json`);
}

/** The folder that holds one file per saved app. */
export function appsDir(dataDir: string): string {
  return join(dataDir, "apps");
}

/**
 * The file of one saved app, `apps/<name>.json`.
 * @throws InvalidAppNameError before building any path when `name` is not valid.
 */
export function savedAppFile(dataDir: string, name: string): string {
  return join(appsDir(dataDir), `${assertAppName(name)}.json`);
}

/** The file of disk space kept for acknowledgements, `space.reserve` (./fs/space-reserve.ts); one per data directory, principals' views included. */
export function spaceReserveFile(dataDir: string): string {
  return join(dataDir, "space.reserve");
}

/** The folder that holds one folder per remote principal (docs/ARCHITECTURE.md, "Remote serving"). */
export function principalsDir(dataDir: string): string {
  return join(dataDir, "principals");
}

/**
 * The folder of one principal's own data, laid out as a data directory of its own.
 * @throws Error when `namespace` does not match PRINCIPAL_NAMESPACE_PATTERN.
 */
export function principalDir(dataDir: string, namespace: string): string {
  return join(principalsDir(dataDir), assertPrincipalNamespace(namespace));
}
