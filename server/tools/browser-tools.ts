/**
 * `browser_link`, app-only: the link that shows a channel's app in a browser tab, beside
 * the chat (the reader's and the app shell's "Open in a browser tab", which hand it to
 * the host's `openLink`). Registered only on a server that has a browser host on the
 * person's machine (../browser-host.ts): a remote one has none, and its apps offer no
 * tab. The link carries the host's key: it is for the person, and an app hands it to the
 * person's browser only.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { BrowserLinks } from "../browser-links.js";
import { registerAppOnlyTool } from "./app-only.js";
import { guarded, toolResult } from "./results.js";
import { channelIdSchema, compactSchema } from "./schemas.js";

const browserLinkInput = z.object({ channel_id: channelIdSchema });
const browserLinkOutput = z.object({ url: z.string() });

/** Registers `browser_link` on `server`, its links from `browser`. */
export function registerBrowserTools(server: McpServer, browser: BrowserLinks): void {
  registerAppOnlyTool(
    server,
    "browser_link",
    {
      title: "Open in a browser tab (app only)",
      description:
        "App only: a link that shows the channel's app in a browser tab on the person's machine, starting the browser host when none runs.",
      inputSchema: compactSchema(browserLinkInput),
      outputSchema: compactSchema(browserLinkOutput),
    },
    guarded(async ({ channel_id }) => {
      const url = await browser.linkTo(channel_id);
      return toolResult({ url }, `Channel ${channel_id} in a browser tab: ${url}`);
    }),
  );
}
