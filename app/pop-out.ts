/**
 * "Open in a browser tab": the app (the reader, the app shell) shows its channel in a
 * browser tab beside the chat, where the browser host serves the same channel live
 * (both show every question and answer). Offered only where it works: the server has a
 * browser host on the person's machine (`browser_tab` in the app's state), the host
 * opens links (`openLinks`), and the app is not in that browser host already. The link
 * comes from the app-only `browser_link` when the person asks, which starts the host
 * when none runs, and goes to the host's `openLink`.
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import { BROWSER_HOST_NAME } from "../protocol/client-capabilities.js";
import { textOf } from "./channel.js";

/** The pop-out of one app: its button, for the channel the app shows. */
export class PopOut {
  /** The channel the app shows; set before {@link offer}. */
  channelId = "";

  constructor(
    private readonly app: App,
    private readonly button: HTMLButtonElement,
    /** Says to the person what went wrong (the developer's text goes to the console). */
    private readonly onerror: (text: string) => void,
  ) {
    button.addEventListener("click", () => void this.open());
  }

  /** Shows the button when the pop-out works here: `browserTab` from the app's state, and the host's side. */
  offer(browserTab: boolean | undefined): void {
    const host = this.app.getHostVersion()?.name;
    this.button.hidden = !(browserTab === true && this.app.getHostCapabilities()?.openLinks !== undefined && host !== BROWSER_HOST_NAME);
  }

  private async open(): Promise<void> {
    this.button.disabled = true;
    try {
      const result = await this.app.callServerTool({ name: "browser_link", arguments: { channel_id: this.channelId } });
      if (result.isError) throw new Error(textOf(result.content));
      const url = (result.structuredContent as { url?: unknown } | undefined)?.url;
      if (typeof url !== "string") throw new Error("browser_link returned no url");
      const opened = await this.app.openLink({ url });
      if (opened.isError) throw new Error("the host refused to open the link");
    } catch (error) {
      console.warn("backchannel: the browser tab did not open:", error);
      this.onerror(
        "The browser tab could not be opened. Try again; if it keeps failing, run `backchannel web` in a terminal and open the link it prints.",
      );
    } finally {
      this.button.disabled = false;
    }
  }
}
