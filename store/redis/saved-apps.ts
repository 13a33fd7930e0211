/**
 * Saved apps in Redis: `bc:app:{<name>}` holds one app's JSON (../saved-app.ts). Saved
 * apps are the user's to keep: they never expire and the idle sweep leaves them.
 *
 * Invariants: a value is replaced whole (one SET), so a reader sees the old app or the
 * new one; it is written with the HTML last, so that a listing reads each value's head
 * only (GETRANGE), never the HTML; no key is built from a name before the name is checked.
 */
import { SAVED_APP_MAX_BYTES } from "../../core/limits.js";
import { type Warn, warnOnStderr } from "../../core/warn.js";
import {
  DamagedSavedAppError,
  parseSavedApp,
  readSummaries,
  SAVED_APP_SUMMARY_BYTES,
  SavedAppTooLargeError,
  serializeSavedApp,
  summaryFromHead,
  type SavedApp,
  type SavedAppStore,
  type SavedAppSummary,
} from "../saved-app.js";
import type { RedisConnection } from "./connection.js";
import type { KeySpace } from "./keys.js";
import { scanKeys } from "./channels.js";

/** The Redis-backed {@link SavedAppStore}. */
export class RedisSavedApps implements SavedAppStore {
  /**
   * @param connection the store's connection.
   * @param space the key space the apps are in.
   * @param warn where a saved app that cannot be read is reported while listing. Default: one line on stderr.
   */
  constructor(
    private readonly connection: RedisConnection,
    private readonly space: KeySpace,
    private readonly warn: Warn = warnOnStderr,
  ) {}

  async read(name: string): Promise<SavedApp | null> {
    const key = this.space.app(name);
    const text = await this.connection.run((client) => client.get(key));
    if (text === null || text === undefined) return null;
    let value: unknown;
    try {
      value = JSON.parse(String(text));
    } catch {
      throw new DamagedSavedAppError(name, "it is not JSON");
    }
    return parseSavedApp(value, name);
  }

  async write(app: SavedApp): Promise<void> {
    const key = this.space.app(app.name);
    const text = serializeSavedApp(parseSavedApp(app, app.name));
    const bytes = Buffer.byteLength(text);
    if (bytes > SAVED_APP_MAX_BYTES) throw new SavedAppTooLargeError(app.name, bytes, SAVED_APP_MAX_BYTES);
    await this.connection.change({ route: key, args: ["SET", key, text], describe: () => `the saved app ${app.name}` });
  }

  summaries(names: readonly string[]): Promise<SavedAppSummary[]> {
    return readSummaries(names, (name) => this.summary(name), this.warn);
  }

  /** The summary of the saved app `name` from its value's head, or from the whole value when the head is not as serializeSavedApp writes it. */
  private async summary(name: string): Promise<SavedAppSummary | null> {
    const key = this.space.app(name);
    // GETRANGE of a missing key is "": read() then tells a missing app from a damaged one.
    const head = String(await this.connection.run((client) => client.getRange(key, 0, SAVED_APP_SUMMARY_BYTES - 1)));
    const summary = summaryFromHead(head, name);
    if (summary) return summary;
    const app = await this.read(name);
    return app && { name: app.name, title: app.title, description: app.description };
  }

  async names(): Promise<string[]> {
    return (await scanKeys(this.connection, this.space.appPattern))
      .map((key) => this.space.appNameOf(key))
      .filter((name): name is string => name !== undefined)
      .sort();
  }

  async remove(name: string): Promise<boolean> {
    const key = this.space.app(name);
    return (await this.connection.change({ route: key, args: ["DEL", key], describe: () => `the removal of the saved app ${name}` })) === 1;
  }

  async sizeOf(name: string): Promise<number> {
    const key = this.space.app(name);
    return Number(await this.connection.run((client) => client.strLen(key))) || 0;
  }

  async usedBytes(): Promise<number> {
    let bytes = 0;
    for (const key of await scanKeys(this.connection, this.space.appPattern)) {
      bytes += Number(await this.connection.run((client) => client.strLen(key))) || 0;
    }
    return bytes;
  }
}
