/**
 * What a server checks about Redis when it starts: the settings under which Redis could
 * drop what backchannel acknowledged. Redis keeps the data; these settings decide
 * whether it survives.
 *
 * - `maxmemory-policy` other than `noeviction` lets Redis evict keys when it is full:
 *   a queue, a document, or a channel's seq counter could vanish. Under `noeviction` a
 *   full Redis refuses writes instead, which backchannel reports to the writer.
 * - `appendonly no` with no `save` points keeps everything in memory only: a restart of
 *   Redis loses every channel. With snapshots only, or `appendfsync` other than
 *   `always`, a crash loses what was acknowledged since the last write to disk.
 * - a user without the rights to the wake channels (Redis 7 ACLs give none by default)
 *   cannot wake waiters: see {@link wakeRightsRefusal}.
 * - replicas with `BACKCHANNEL_REDIS_REPLICAS=0`: changes are answered before a replica
 *   has them, so a failover can lose them (see {@link replicaWarning}).
 */
import { ErrorReply } from "@redis/client";
import type { StoreClient } from "./connection.js";
import { REPLICAS_ENV_VAR, type ReplicaSetting } from "./replicated.js";

/** The settings read, as Redis reports them. */
export interface RedisSettings {
  "maxmemory-policy"?: string;
  appendonly?: string;
  appendfsync?: string;
  save?: string;
}

/**
 * The warnings for `settings`, each one line saying what could be lost and what to set; none when all is well.
 */
export function settingsWarnings(settings: RedisSettings): string[] {
  const warnings: string[] = [];
  const policy = settings["maxmemory-policy"];
  if (policy !== undefined && policy !== "noeviction") {
    warnings.push(
      `maxmemory-policy is ${policy}: when Redis is full it may evict backchannel's keys (queued messages, documents, seq counters). Set "maxmemory-policy noeviction"`,
    );
  }
  const aof = settings.appendonly === "yes";
  const snapshots = settings.save !== undefined && settings.save.trim() !== "";
  if (settings.appendonly !== undefined && !aof && !snapshots) {
    warnings.push(
      "persistence is off (appendonly no, no save points): a restart of Redis loses every message not yet read, every document and every session record " +
        '(what is sent after it is delivered, from seq 1 again). Set "appendonly yes" and "appendfsync always"',
    );
  } else if (settings.appendonly !== undefined && !aof) {
    warnings.push(
      'only snapshots persist (appendonly no): a crash of Redis loses what was acknowledged since the last one. Set "appendonly yes" and "appendfsync always"',
    );
  } else if (aof && settings.appendfsync !== undefined && settings.appendfsync !== "always") {
    warnings.push(
      `appendfsync is ${settings.appendfsync}: a crash of the machine loses what was acknowledged in the last second or so. Set "appendfsync always" for acknowledged = durable`,
    );
  }
  return warnings;
}

/**
 * The warning for a store with `replicas` replicas that answers changes without waiting
 * for any (`setting` 0); none otherwise.
 */
export function replicaWarning(setting: ReplicaSetting, replicas: number): string | undefined {
  if (setting !== 0 || replicas === 0) return undefined;
  return (
    `it has ${replicas} replica${replicas === 1 ? "" : "s"}, and ${REPLICAS_ENV_VAR}=0 answers each change before any replica has it: ` +
    `a failover can lose what was answered, and a promoted replica can hand out a seq a reader already saw (that reader then skips a message). ` +
    `Unset ${REPLICAS_ENV_VAR} (every replica online confirms each change)`
  );
}

/**
 * Reads the settings of the Redis behind `client` (CONFIG GET; managed services that
 * forbid it give an empty result).
 * @throws whatever the command throws (the caller reports it as a warning).
 */
export async function readSettings(client: StoreClient): Promise<RedisSettings> {
  const settings: RedisSettings = {};
  for (const name of ["maxmemory-policy", "appendonly", "appendfsync", "save"] as const) {
    const reply = (await client.configGet(name)) as Record<string, string | undefined>;
    const value = reply[name];
    if (value !== undefined) settings[name] = value;
  }
  return settings;
}

/** The pub/sub channel the start check publishes on: nobody listens, and `&bc:*` covers it as it covers every wake channel. */
const RIGHTS_PROBE_CHANNEL = "bc:rights-probe";

/**
 * Whether the store's Redis user may publish its wake-ups (Redis 7 gives a new ACL user
 * no pub/sub channel, and every change of the store publishes one).
 * @returns Redis's refusal in its own words, or `undefined` when it may.
 * @throws whatever else the publish throws (the caller ignores it: a store away is reported elsewhere).
 */
export async function wakeRightsRefusal(client: StoreClient): Promise<string | undefined> {
  try {
    await client.sPublish(RIGHTS_PROBE_CHANNEL, "");
    return undefined;
  } catch (error) {
    if (error instanceof ErrorReply && /^NOPERM\b/.test(error.message)) return error.message;
    throw error;
  }
}
