/**
 * The browser host's list of open channels (host mode, no channel in the hash): what
 * the host's `channels` route answers, each a link that shows its app on this page.
 */

/** One open channel, as the host lists it (web/channels.ts). */
interface ListedChannel {
  id: string;
  title: string | null;
  last_activity: string;
}

/** Fills `list` with the open channels, newest first; says so when there are none. */
export async function showChannelList(list: HTMLElement): Promise<void> {
  const response = await fetch(new URL("channels", location.href), { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`the host did not list its channels (HTTP ${response.status}); reload the page`);
  const { channels } = (await response.json()) as { channels: ListedChannel[] };
  if (channels.length === 0) {
    list.replaceChildren(
      Object.assign(document.createElement("li"), { className: "muted", textContent: "None yet: ask your agent to open a document." }),
    );
    return;
  }
  list.replaceChildren(
    ...channels.map((channel) => {
      const item = document.createElement("li");
      const link = Object.assign(document.createElement("a"), {
        href: `#${encodeURIComponent(channel.id)}`,
        textContent: channel.title ?? channel.id,
      });
      const when = Object.assign(document.createElement("span"), {
        className: "muted",
        textContent: ` ${channel.id}, last used ${new Date(channel.last_activity).toLocaleString()}`,
      });
      item.append(link, when);
      return item;
    }),
  );
}
