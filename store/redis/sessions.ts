/**
 * Session records in Redis (`bc:session:{<key>}`, ./keys.ts): the Redis-backed
 * {@link SessionStore}. A change is a compare-and-set (./compare-and-set.ts) and
 * publishes on the record's wake channel. A record expires when it has not been written
 * for the channel TTL.
 *
 * Invariant: a record that does not parse reads as an empty session and is replaced by
 * the next write: everything in it is rebuilt as channels are used again.
 */
import { emptySession, parseSession, type SessionRecord } from "../session-record.js";
import type { ChangeSubscription, SessionReader, SessionStore } from "../store.js";
import type { RedisConnection } from "./connection.js";
import { untilStored } from "./compare-and-set.js";
import type { KeySpace } from "./keys.js";
import { scriptCommand } from "./scripts.js";
import type { WakeHub } from "./wake-hub.js";

/** Session records, read-only: for the watcher and the status line. */
export class RedisSessionReader implements SessionReader {
  /**
   * @param connection the store's connection.
   * @param hub the store's wake-ups.
   * @param space the key space the records are in.
   */
  constructor(
    protected readonly connection: RedisConnection,
    protected readonly hub: WakeHub,
    protected readonly space: KeySpace,
  ) {}

  async read(key: string): Promise<SessionRecord> {
    const name = this.space.session(key);
    const text = await this.connection.run((client) => client.hGet(name, "json"));
    return text === null || text === undefined ? emptySession() : parseSession(text);
  }

  watch(key: string): ChangeSubscription {
    return this.hub.listen(this.space.sessionWake(key));
  }
}

/** Session records, read and written. */
export class RedisSessions extends RedisSessionReader implements SessionStore {
  /**
   * @param connection the store's connection.
   * @param hub the store's wake-ups.
   * @param space the key space the records are in.
   * @param ttlMs a record not written for this long expires.
   */
  constructor(
    connection: RedisConnection,
    hub: WakeHub,
    space: KeySpace,
    private readonly ttlMs: number,
  ) {
    super(connection, hub, space);
  }

  async update(key: string, update: (current: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const name = this.space.session(key);
    const wake = this.space.sessionWake(key);
    return untilStored(`the session record ${key}`, async () => {
      const [text, version] = await this.connection.run((client) => client.hmGet(name, ["json", "v"]));
      const next = update(text === null || text === undefined ? emptySession() : parseSession(text));
      const command = scriptCommand("bcSessionSet", [name], [this.ttlMs, Number(version ?? 0), JSON.stringify(next), wake]);
      const stored = await this.connection.change({
        ...command,
        route: name,
        // 0: another writer came first, nothing changed.
        confirm: (reply) => reply === 1,
        describe: () => `the update of the session record ${key}`,
      });
      return stored === 1 ? next : undefined;
    });
  }
}
