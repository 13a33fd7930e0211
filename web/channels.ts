/**
 * The open channels of a store, as the browser host lists them (its page with no
 * channel in the hash, and `backchannel web`): newest first, each with its title.
 */
import { channelTitle } from "../store/channel-title.js";
import type { ChannelStore } from "../store/store.js";

/** One open channel. */
export interface ListedChannel {
  id: string;
  /** Its reader's document's title, else its app's; `null` for a channel with neither (only messages). */
  title: string | null;
  last_activity: string;
}

/** At most this many channels are listed: the newest. */
export const MAX_LISTED_CHANNELS = 50;

/** The newest {@link MAX_LISTED_CHANNELS} channels of `store`, newest first. @throws the store's errors. */
export async function listOpenChannels(store: ChannelStore): Promise<ListedChannel[]> {
  const channels = (await store.listChannels()).sort((a, b) => b.lastActivity.getTime() - a.lastActivity.getTime()).slice(0, MAX_LISTED_CHANNELS);
  return Promise.all(
    channels.map(async (channel) => ({
      id: channel.id,
      title: (await channelTitle(store, channel.id)) ?? null,
      last_activity: channel.lastActivity.toISOString(),
    })),
  );
}
