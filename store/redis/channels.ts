/**
 * The channels of a Redis store as a whole: listed, removed, and swept when idle.
 *
 * Idleness is judged by Redis's clock (the `touched` time the scripts write), never by a
 * process's: a server whose clock is off cannot make a live channel look idle. The sweep
 * never removes a channel while one of its queues holds a message; Redis itself expires
 * an empty channel's keys after the TTL (./scripts.ts), so the sweep mostly finds nothing.
 */
import type { ChannelInfo } from "../store.js";
import type { RedisConnection } from "./connection.js";
import { type KeySpace, keyList, PRINCIPAL_KEYS_PATTERN, principalOfKey } from "./keys.js";
import type { Upkeep } from "./queues.js";
import { scriptCommand } from "./scripts.js";

/**
 * Every channel in the store, with the time it was last used (by Redis's clock).
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function listChannels(connection: RedisConnection, space: KeySpace): Promise<ChannelInfo[]> {
  const ids = (await scanKeys(connection, space.metaPattern)).map((key) => space.channelIdOfMeta(key)).filter((id): id is string => id !== undefined);
  const touched = await Promise.all(ids.map((id) => connection.run((client) => client.hGet(space.channel(id).meta, "touched"))));
  return ids.map((id, index) => ({ id, lastActivity: new Date(Number(touched[index] ?? 0)) }));
}

/**
 * Removes a channel and everything in it, and wakes its waiters; nothing when it does not exist.
 * @throws InvalidChannelIdError, StoreUnavailableError.
 */
export async function removeChannel(connection: RedisConnection, space: KeySpace, channelId: string, upkeep: Upkeep): Promise<void> {
  const keys = space.channel(channelId);
  const command = scriptCommand("bcRemove", keyList(keys), [
    upkeep.ttlMs,
    upkeep.touchEveryMs,
    space.queueWake(channelId, "ui"),
    space.queueWake(channelId, "agent"),
  ]);
  await connection.change({ ...command, route: keys.meta, describe: () => `the removal of channel ${channelId}` });
}

/**
 * Removes channels idle for longer than the TTL (never one holding a message), and
 * session records not written for as long. `now` shifts Redis's clock by
 * `now - Date.now()` (0 by default): tests look into the future with it.
 * @returns the ids of the channels removed.
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function sweepIdle(connection: RedisConnection, space: KeySpace, upkeep: Upkeep, now: number = Date.now()): Promise<string[]> {
  const shift = now - Date.now();
  const removed: string[] = [];
  for (const key of await scanKeys(connection, space.metaPattern)) {
    const id = space.channelIdOfMeta(key);
    if (id === undefined) continue;
    const gone = await connection.run((client) =>
      client.bcSweep(keyList(space.channel(id)), [upkeep.ttlMs, upkeep.touchEveryMs, shift, space.queueWake(id, "ui"), space.queueWake(id, "agent")]),
    );
    if (gone === 1) removed.push(id);
  }
  for (const name of await scanKeys(connection, space.sessionPattern)) {
    const key = space.sessionKeyOf(name);
    if (key !== undefined) await connection.run((client) => client.bcSessionSweep([space.session(key)], [upkeep.ttlMs, shift]));
  }
  return removed;
}

/**
 * The bytes the channels of `space` hold: each queue's JSON (the `bytes:<queue>` its
 * scripts keep) and each state document's.
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function usedBytes(connection: RedisConnection, space: KeySpace): Promise<number> {
  let bytes = 0;
  for (const { id } of await listChannels(connection, space)) {
    const keys = space.channel(id);
    const queued = await connection.run((client) => client.hmGet(keys.meta, ["bytes:ui", "bytes:agent"]));
    for (const value of queued) bytes += Number(value ?? 0) || 0;
    const names = (await connection.run((client) => client.hKeys(keys.state))).map(String).filter((name) => !name.startsWith("v:"));
    for (const name of names) bytes += Number(await connection.run((client) => client.hStrLen(keys.state, name))) || 0;
  }
  return bytes;
}

/**
 * The namespaces of the principals that have keys in the store.
 * @throws StoreUnavailableError, StoreRefusedError.
 */
export async function listPrincipals(connection: RedisConnection): Promise<string[]> {
  const namespaces = new Set<string>();
  for (const key of await scanKeys(connection, PRINCIPAL_KEYS_PATTERN)) {
    const namespace = principalOfKey(key);
    if (namespace !== undefined) namespaces.add(namespace);
  }
  return [...namespaces];
}

/** Every key that matches `pattern` (SCAN: it never blocks Redis for long). */
export async function scanKeys(connection: RedisConnection, pattern: string): Promise<string[]> {
  const keys = new Set<string>();
  let cursor = "0";
  do {
    const reply = await connection.run((client) => client.scan(cursor, { MATCH: pattern, COUNT: 1000 }));
    cursor = String(reply.cursor);
    for (const key of reply.keys) keys.add(String(key));
  } while (cursor !== "0");
  return [...keys];
}
