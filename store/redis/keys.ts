/**
 * The names of everything the Redis store keeps (docs/ARCHITECTURE.md, "The Redis store"):
 *
 *     bc:{<channel>}:meta           hash: seq:<queue> (last seq handed out), bytes:<queue>, epoch:<queue>,
 *                                   readers:<queue> (../readers.ts), touched
 *     bc:{<channel>}:ui             stream of the app's queue, entry ids <seq>-0
 *     bc:{<channel>}:agent          stream of the agent's queue
 *     bc:{<channel>}:state          hash: <name> (a state document's JSON), v:<name> (its version)
 *     bc:{<channel>}:wake:<queue>   sharded pub/sub channel: "this queue changed"
 *     bc:session:{<key>}            hash: json (the session record), v, touched
 *     bc:session:{<key>}:wake       sharded pub/sub channel: "this record changed"
 *     bc:app:{<name>}               a saved app's JSON
 *
 * A principal's names are the same behind `bc:p:<namespace>:` (docs/ARCHITECTURE.md,
 * "Remote serving"): `bc:p:<namespace>:{<channel>}:meta`, and so on.
 *
 * Invariant: every key and pub/sub channel of one channel carries the channel id as its
 * hash tag (`{…}`), so that they share one hash slot: a script may touch them all at
 * once, and the store runs on Redis Cluster too. Names are built only from checked ids.
 */
import { assertAppName, assertChannelId, assertPrincipalNamespace, assertSessionKey, isChannelId, SESSION_KEY_PATTERN } from "../../core/ids.js";
import type { QueueName } from "../../core/paths.js";

/** The first part of every key of the store's own. */
export const KEY_PREFIX = "bc:";

/** The keys of one channel, in the order every channel script takes them (KEYS[1..4]). */
export interface ChannelKeys {
  meta: string;
  ui: string;
  agent: string;
  state: string;
}

/** The keys of a channel as a script's KEYS. */
export function keyList(keys: ChannelKeys): string[] {
  return [keys.meta, keys.ui, keys.agent, keys.state];
}

/**
 * The names of one key space: the store's own ({@link ROOT_KEYS}, every name starting
 * `bc:`) or a principal's ({@link principalKeys}, every name starting `bc:p:<namespace>:`).
 * No name of one space is a name of another, and no SCAN pattern of one matches a name
 * of another: a prefix holds only `a-z`, `0-9` and `:`, never a glob character.
 */
export class KeySpace {
  /** The pattern SCAN matches every channel's meta key with. */
  readonly metaPattern: string;
  /** The pattern SCAN matches every session record with. */
  readonly sessionPattern: string;
  /** The pattern SCAN matches every saved app's key with. */
  readonly appPattern: string;

  /** @param prefix the first part of every name. */
  constructor(readonly prefix: string) {
    this.metaPattern = `${prefix}{*}:meta`;
    this.sessionPattern = `${prefix}session:{*}`;
    this.appPattern = `${prefix}app:{*}`;
  }

  /**
   * The keys of channel `channelId`.
   * @throws InvalidChannelIdError before any name is built.
   */
  channel(channelId: string): ChannelKeys {
    const tag = `${this.prefix}{${assertChannelId(channelId)}}:`;
    return { meta: `${tag}meta`, ui: `${tag}ui`, agent: `${tag}agent`, state: `${tag}state` };
  }

  /**
   * The pub/sub channel that says a queue changed.
   * @throws InvalidChannelIdError.
   */
  queueWake(channelId: string, queue: QueueName): string {
    return `${this.prefix}{${assertChannelId(channelId)}}:wake:${queue}`;
  }

  /** The channel id in a meta key found by {@link metaPattern}, or `undefined` for anything else. */
  channelIdOfMeta(key: string): string | undefined {
    const id = between(key, `${this.prefix}{`, "}:meta");
    return isChannelId(id) ? id : undefined;
  }

  /**
   * The key of a session record.
   * @throws Error for a key that does not match SESSION_KEY_PATTERN.
   */
  session(key: string): string {
    return `${this.prefix}session:{${assertSessionKey(key)}}`;
  }

  /** The pub/sub channel that says a session record changed. */
  sessionWake(key: string): string {
    return `${this.session(key)}:wake`;
  }

  /** The session key in a key found by {@link sessionPattern}, or `undefined` for anything else. */
  sessionKeyOf(name: string): string | undefined {
    const key = between(name, `${this.prefix}session:{`, "}");
    return key !== undefined && SESSION_KEY_PATTERN.test(key) ? key : undefined;
  }

  /**
   * The key of saved app `name`.
   * @throws InvalidAppNameError before any name is built.
   */
  app(name: string): string {
    return `${this.prefix}app:{${assertAppName(name)}}`;
  }

  /** The app name in a key found by {@link appPattern}, or `undefined` for anything else. */
  appNameOf(key: string): string | undefined {
    const name = between(key, `${this.prefix}app:{`, "}");
    return isChannelId(name) ? name : undefined;
  }
}

/** The store's own key space. */
export const ROOT_KEYS = new KeySpace(KEY_PREFIX);

/** The first part of every principal's key space. */
const PRINCIPAL_PREFIX = `${KEY_PREFIX}p:`;

/** The pattern SCAN matches every principal's keys with. */
export const PRINCIPAL_KEYS_PATTERN = `${PRINCIPAL_PREFIX}*`;

/**
 * The key space of principal `namespace`: `bc:p:<namespace>:…`.
 * @throws Error for a namespace that does not match PRINCIPAL_NAMESPACE_PATTERN.
 */
export function principalKeys(namespace: string): KeySpace {
  return new KeySpace(`${PRINCIPAL_PREFIX}${assertPrincipalNamespace(namespace)}:`);
}

/** The principal namespace of a key found by {@link PRINCIPAL_KEYS_PATTERN}, or `undefined` for anything else. */
export function principalOfKey(key: string): string | undefined {
  const match = /^bc:p:([0-9a-f]{32}):/.exec(key);
  return match?.[1];
}

/** The part of `text` between `head` and `tail`, or `undefined` when it does not start and end so. */
function between(text: string, head: string, tail: string): string | undefined {
  if (!text.startsWith(head) || !text.endsWith(tail) || text.length < head.length + tail.length) return undefined;
  return text.slice(head.length, text.length - tail.length);
}
