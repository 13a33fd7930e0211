/**
 * The file layout of the data directory (docs/ARCHITECTURE.md, "On disk"), shared by the store and the watcher:
 *
 *     <data dir>/channels/<channel id>/ui.json      agent → app queue
 *     <data dir>/channels/<channel id>/agent.json   app → agent queue
 *     <data dir>/channels/<channel id>/state.<name>.json   per-channel state of apps (the reader's document, …)
 *     <data dir>/sessions/<session key>.json   a host session's channels and wall (see ../store/file/session-files.ts)
 *     <data dir>/apps/<name>.json              an app the agent wrote and the user kept (see ../store/file/saved-apps.ts)
 *
 * Every path under `channels/` is built here, and only from a checked channel id, so
 * no caller can name a file outside its channel folder.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { assertAppName, assertChannelId, assertSessionKey, assertStateName } from "./ids.js";

/** The two queues of a channel, named by who reads them: `ui` is read by the app, `agent` by the agent. */
export const QUEUE_NAMES = ["ui", "agent"] as const;

/** `"ui"` (agent → app) or `"agent"` (app → agent). */
export type QueueName = (typeof QUEUE_NAMES)[number];

/**
 * The data directory: `$BACKCHANNEL_HOME` when set, else the per-user state directory
 * (`$XDG_STATE_HOME/backchannel` or `~/.local/state/backchannel` on Linux and other
 * Unixes, `~/Library/Application Support/backchannel` on macOS,
 * `%LOCALAPPDATA%\backchannel` on Windows). Every process of the user resolves the same one.
 */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  if (env.BACKCHANNEL_HOME) return env.BACKCHANNEL_HOME;
  if (platform === "darwin") return join(home, "Library", "Application Support", "backchannel");
  if (platform === "win32") return join(env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "backchannel");
  return join(env.XDG_STATE_HOME || join(home, ".local", "state"), "backchannel");
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
