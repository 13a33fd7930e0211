/**
 * What the host's chat does with a message the app puts there (`ui/message`, ext-apps
 * `sendMessage`). A host declares only that it takes one (`hostCapabilities.message`),
 * not what it does with it, and hosts differ (measured: docs/hosts.md):
 *
 * - `"input"`: VS Code, Claude Desktop and the playground put it in the chat's input box;
 *   the person's send gives the agent its turn;
 * - `"sends"`: mcp-use's inspector sends it at once as the person's next message, a new
 *   turn of the agent (and refuses it while a turn runs), so the app's message is itself
 *   a doorbell;
 * - `"none"`: the host takes no message.
 *
 * Only hosts measured to send at once are named; any other is taken as `"input"`, since
 * asking the person first is never wrong.
 */
import type { App } from "@modelcontextprotocol/ext-apps";

/** What the chat does with the app's message. */
export type ChatDelivery = "none" | "input" | "sends";

/** `hostInfo.name` of the hosts whose chat sends the app's message as a turn at once. */
const SENDS_AT_ONCE: ReadonlySet<string> = new Set(["mcp-use-inspector"]);

/** The chat delivery of the host `app` is connected to (`"none"` before the handshake). */
export function chatDelivery(app: App): ChatDelivery {
  if (app.getHostCapabilities()?.message === undefined) return "none";
  return SENDS_AT_ONCE.has(app.getHostVersion()?.name ?? "") ? "sends" : "input";
}
