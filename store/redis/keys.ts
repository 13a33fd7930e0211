/**
 * The names of everything the Redis store keeps (docs/ARCHITECTURE.md, "The Redis store"):
 *
 *     bc:{<channel>}:meta           hash: seq:<queue> (last seq handed out), bytes:<queue>, touched
 *     bc:{<channel>}:ui             stream of the app's queue, entry ids <seq>-0
 *     bc:{<channel>}:agent          stream of the agent's queue
 *     bc:{<channel>}:state          hash: <name> (a state document's JSON), v:<name> (its version)
 *     bc:{<channel>}:wake:<queue>   sharded pub/sub channel: "this queue changed"
 *     bc:session:{<key>}            hash: json (the session record), v, touched
 *     bc:session:{<key>}:wake       sharded pub/sub channel: "this record changed"
 *     bc:app:{<name>}               a saved app's JSON
 *
 * Invariant: every key and pub/sub channel of one channel carries the channel id as its
 * hash tag (`{…}`), so that they share one hash slot: a script may touch them all at
 * once, and the store runs on Redis Cluster too. Names are built only from checked ids.
 */
import { assertAppName, assertChannelId, assertSessionKey, isChannelId, SESSION_KEY_PATTERN } from "../../core/ids.js";
import type { QueueName } from "../../core/paths.js";

/** The first part of every key. */
export const KEY_PREFIX = "bc:";

/** The keys of one channel, in the order every channel script takes them (KEYS[1..4]). */
export interface ChannelKeys {
  meta: string;
  ui: string;
  agent: string;
  state: string;
}

/**
 * The keys of channel `channelId`.
 * @throws InvalidChannelIdError before any name is built.
 */
export function channelKeys(channelId: string): ChannelKeys {
  const tag = `${KEY_PREFIX}{${assertChannelId(channelId)}}:`;
  return { meta: `${tag}meta`, ui: `${tag}ui`, agent: `${tag}agent`, state: `${tag}state` };
}

/** The keys of a channel as a script's KEYS. */
export function keyList(keys: ChannelKeys): string[] {
  return [keys.meta, keys.ui, keys.agent, keys.state];
}

/**
 * The pub/sub channel that says a queue changed.
 * @throws InvalidChannelIdError.
 */
export function queueWakeChannel(channelId: string, queue: QueueName): string {
  return `${KEY_PREFIX}{${assertChannelId(channelId)}}:wake:${queue}`;
}

/** The pattern SCAN matches every channel's meta key with. */
export const META_KEY_PATTERN = `${KEY_PREFIX}{*}:meta`;

/** The channel id in a meta key found by {@link META_KEY_PATTERN}, or `undefined` for anything else. */
export function channelIdOfMetaKey(key: string): string | undefined {
  const head = `${KEY_PREFIX}{`;
  const tail = "}:meta";
  if (!key.startsWith(head) || !key.endsWith(tail)) return undefined;
  const id = key.slice(head.length, -tail.length);
  return isChannelId(id) ? id : undefined;
}

/**
 * The key of a session record.
 * @throws Error for a key that does not match SESSION_KEY_PATTERN.
 */
export function sessionKeyName(key: string): string {
  return `${KEY_PREFIX}session:{${assertSessionKey(key)}}`;
}

/** The pub/sub channel that says a session record changed. */
export function sessionWakeChannel(key: string): string {
  return `${sessionKeyName(key)}:wake`;
}

/** The pattern SCAN matches every session record with. */
export const SESSION_KEY_NAME_PATTERN = `${KEY_PREFIX}session:{*}`;

/** The session key in a key found by {@link SESSION_KEY_NAME_PATTERN}, or `undefined` for anything else. */
export function sessionKeyOfName(name: string): string | undefined {
  const head = `${KEY_PREFIX}session:{`;
  if (!name.startsWith(head) || !name.endsWith("}")) return undefined;
  const key = name.slice(head.length, -1);
  return SESSION_KEY_PATTERN.test(key) ? key : undefined;
}

/**
 * The key of saved app `name`.
 * @throws InvalidAppNameError before any name is built.
 */
export function appKey(name: string): string {
  return `${KEY_PREFIX}app:{${assertAppName(name)}}`;
}

/** The pattern SCAN matches every saved app's key with. */
export const APP_KEY_PATTERN = `${KEY_PREFIX}app:{*}`;

/** The app name in a key found by {@link APP_KEY_PATTERN}, or `undefined` for anything else. */
export function appNameOfKey(key: string): string | undefined {
  const head = `${KEY_PREFIX}app:{`;
  if (!key.startsWith(head) || !key.endsWith("}")) return undefined;
  const name = key.slice(head.length, -1);
  return isChannelId(name) ? name : undefined;
}
