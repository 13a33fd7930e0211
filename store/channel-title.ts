/**
 * The title a channel was opened with, for the watchers' re-arm line: its reader's
 * document's, else its app's (the state documents of protocol/channel-state.ts).
 */
import { stateTitle, TITLED_STATES } from "../protocol/channel-state.js";
import type { ChannelReader } from "./store.js";

/**
 * The title of `channelId`, read through `reader`. Ask it once, not per wake-up: a
 * reader's document state holds the whole document.
 * @returns `undefined` when the channel has none, or its state cannot be read now (a
 *   title is a courtesy: the caller goes on without it).
 */
export async function channelTitle(reader: Pick<ChannelReader, "readState">, channelId: string): Promise<string | undefined> {
  for (const name of TITLED_STATES) {
    const title = stateTitle(await reader.readState(channelId, name).catch(() => null));
    if (title !== undefined) return title;
  }
  return undefined;
}
