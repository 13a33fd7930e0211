/**
 * Links into the browser host: the page on this machine that shows a channel's app to a
 * person whose agent's client shows no apps (a terminal agent), or beside a chat that
 * does (the pop-out). ./browser-host.ts finds or starts the host; a server that is not
 * on the person's machine has none.
 */

/** Where a person opens a channel in their browser. */
export interface BrowserLinks {
  /**
   * The link that opens `channelId` in the browser host (it carries the host's key),
   * starting the host when none runs.
   * @throws BrowserHostError when the host cannot be started or found.
   */
  linkTo(channelId: string): Promise<string>;
}
