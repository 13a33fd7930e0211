/**
 * What `open_reader` and `open_app` tell the model about the channel they opened, for
 * its client (../client-view.ts): where the person sees the app (in the chat, or through
 * a link to the browser host when the client shows no apps) and how the model learns of
 * the person's messages (its wake path). The models of Claude Code and Codex read only
 * `structuredContent`, never the text: what they must do next is in it too
 * (`next_step`), with the link.
 */
import { watchCommand } from "../../core/commands.js";
import type { BrowserLinks } from "../browser-links.js";
import type { ClientView } from "../client-view.js";
import { attempt } from "./results.js";

/** What the opening tool knows besides the channel. */
export interface OpenedChannelOptions {
  client: ClientView;
  /** The browser host's links; none where the server cannot show apps in a browser (a remote server). */
  browser?: BrowserLinks;
  /** The words of `watch_command` that name the store. */
  watcherWhere?: readonly string[];
}

/** The fields an opening tool adds to its result, and the sentences of its text that say what to do next. */
export interface OpenedChannel {
  structured: { watch_command?: string; reader_url?: string; app_url?: string; next_step?: string };
  next: string;
}

/**
 * What the model does next with channel `channelId`, opened as `kind` (`reader` or
 * `app`): the watcher command (shell wake path only), and for a client that shows no
 * apps the browser host's link, starting the host when none runs. A host that cannot
 * start is said in `next_step` (the channel is open all the same: `backchannel web`
 * shows it).
 */
export async function openedChannel(kind: "reader" | "app", channelId: string, options: OpenedChannelOptions): Promise<OpenedChannel> {
  const { client } = options;
  const watch = watchCommand(channelId, { where: options.watcherWhere });
  const answer = kind === "reader" ? "answer with notify_ui" : "reply with notify_ui";
  const polled =
    kind === "reader"
      ? "call poll_agent_messages and answer with notify_ui"
      : "call poll_agent_messages (the app sends ready once its scripts ran, app_error {message, line} when one fails) and reply with notify_ui";
  const wake =
    client.wake === "shell"
      ? `Run \`${watch}\` in the background; when it exits, ${polled}.`
      : client.wake === "hook"
        ? `Arm nothing: the plugin wakes you when the person sends something; ${answer}.`
        : `Call poll_agent_messages with "wait_ms": 120000 to wait for the person's messages; ${answer}.`;
  const structured: OpenedChannel["structured"] = client.wake === "shell" ? { watch_command: watch } : {};
  if (client.showsApps) return { structured, next: wake };
  const link = await browserLink(channelId, options.browser);
  if ("error" in link) {
    const next_step = `This client shows no apps, and ${link.error}. ${wake}`;
    return { structured: { ...structured, next_step }, next: next_step };
  }
  const next_step = `Give the person the link below: it opens the ${kind === "reader" ? "reader" : "app"} in their browser. ${wake} The link: ${link.url}`;
  const url = kind === "reader" ? { reader_url: link.url } : { app_url: link.url };
  return { structured: { ...structured, ...url, next_step }, next: `This client shows no apps. ${next_step}` };
}

/** The browser host's link to `channelId`, or why there is none. */
async function browserLink(channelId: string, browser: BrowserLinks | undefined): Promise<{ url: string } | { error: string }> {
  if (!browser) return { error: "this server cannot show it in a browser (it is not on the person's machine)" };
  return attempt<{ url: string } | { error: string }>(
    async () => ({ url: await browser.linkTo(channelId) }),
    (error) => ({ error: `the browser host did not start (${(error as Error).message}); the person can run \`backchannel web\` to see it` }),
  );
}
