/**
 * Per-channel state documents in Redis: fields of the channel's `state` hash (./keys.ts),
 * each with a version, changed by compare-and-set (./compare-and-set.ts).
 *
 * Invariants: a document is replaced whole or not at all; one over the limit is refused
 * and the stored one stays as it was; `update` always sees the value it replaces.
 */
import { assertStateName } from "../../core/ids.js";
import type { JsonValue } from "../../protocol/message.js";
import { StateTooLargeError } from "../errors.js";
import { untilStored } from "./compare-and-set.js";
import type { RedisConnection } from "./connection.js";
import { type KeySpace, keyList } from "./keys.js";
import type { Upkeep } from "./queues.js";
import { scriptCommand } from "./scripts.js";

/**
 * The value of a state document, or `null` when it was never written or does not parse.
 * @throws InvalidChannelIdError, Error for a bad name, StoreUnavailableError.
 */
export async function readStateDoc(connection: RedisConnection, space: KeySpace, channelId: string, name: string): Promise<JsonValue | null> {
  assertStateName(name);
  const keys = space.channel(channelId);
  const text = await connection.run((client) => client.hGet(keys.state, name));
  return parseDoc(text);
}

/**
 * Changes a state document atomically: `update` gets the current value (or `null`) and returns the new one.
 * @returns the new value.
 * @throws StateTooLargeError (nothing changed), LockTimeoutError when other writers kept
 *   coming first for 15 s, StoreUnavailableError, whatever `update` throws.
 */
export async function updateStateDoc(
  connection: RedisConnection,
  space: KeySpace,
  channelId: string,
  name: string,
  maxStateBytes: number,
  upkeep: Upkeep,
  update: (current: JsonValue | null) => JsonValue,
): Promise<JsonValue> {
  assertStateName(name);
  const keys = space.channel(channelId);
  return untilStored(`the state document ${name} of channel ${channelId}`, async () => {
    const [text, version] = await connection.run((client) => client.hmGet(keys.state, [name, `v:${name}`]));
    const next = update(parseDoc(text));
    const json = JSON.stringify(next);
    const bytes = Buffer.byteLength(json);
    if (bytes > maxStateBytes) throw new StateTooLargeError(name, bytes, maxStateBytes);
    const command = scriptCommand("bcStateSet", keyList(keys), [upkeep.ttlMs, upkeep.touchEveryMs, name, Number(version ?? 0), json]);
    const stored = await connection.change({
      ...command,
      route: keys.meta,
      // 0: another writer came first, nothing changed.
      confirm: (reply) => reply === 1,
      describe: () => `the update of the state document ${name} of channel ${channelId}`,
    });
    return stored === 1 ? next : undefined;
  });
}

function parseDoc(text: string | null | undefined): JsonValue | null {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}
