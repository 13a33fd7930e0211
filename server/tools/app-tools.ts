/**
 * Agent-written apps: `open_app` shows the agent's own HTML fragment in the app shell
 * (a second `ui://` resource) with a live channel already wired in, `save_app` keeps an
 * app the user liked, `open_app {name}` opens a saved one again on a fresh channel, and
 * the app-only `app_state` is how the shell, (re-)rendered in any process, fetches its
 * fragment. Saved apps are also resources `backchannel://apps/<name>`. The fragment is
 * the model's own code; it never travels back to the model.
 */
import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/server";
import { assertChannelId, mintChannelId } from "../../core/ids.js";
import { APP_HTML_MAX_BYTES, SAVED_APP_LIST_PAGE } from "../../core/limits.js";
import type { ChannelStore } from "../../store/store.js";
import { Awareness } from "../awareness/awareness.js";
import { checkFragment, checkTitle, DEFAULT_APP_TITLE, readChannelApp, writeChannelApp, type ChannelApp } from "../apps/channel-app.js";
import { findSavedApp, listSavedApps, saveChannelApp, savedAppUri } from "../apps/saved-apps.js";
import { appStateInput, appStateOutput, openAppInput, openAppOutput, saveAppInput, saveAppOutput } from "../apps/schemas.js";
import { registerBuiltApp, SHELL_APP } from "../apps/resource.js";
import type { BrowserLinks } from "../browser-links.js";
import { type ClientView, FULL_VIEW } from "../client-view.js";
import { registerAppOnlyTool } from "./app-only.js";
import { openedChannel } from "./opened-channel.js";
import { guarded, guardedRead, messageError, toolResult } from "./results.js";
import { compactSchema } from "./schemas.js";

/** Options of {@link registerAppTools}. */
export interface AppToolOptions {
  /** The shell's HTML file. Default: the built `dist/app/shell.html`. */
  shellHtmlPath?: string;
  /** The server's awareness (see `ChannelToolOptions.awareness`). Default: these tools' own. */
  awareness?: Awareness;
  /** The words of `watch_command` that name the store (see `ReaderToolOptions.watcherWhere`). Default: none. */
  watcherWhere?: readonly string[];
  /** What the client can do (see `ReaderToolOptions.client`). Default: everything. */
  client?: ClientView;
  /** The browser host's links (see `ReaderToolOptions.browser`). Default none. */
  browser?: BrowserLinks;
}

/**
 * Registers `open_app`, `save_app`, the app-only `app_state`, the shell resource
 * `ui://backchannel/app.html` and the saved-app resources on `server`, backed by `store`.
 */
export function registerAppTools(server: McpServer, store: ChannelStore, options: AppToolOptions = {}): void {
  const awareness = options.awareness ?? new Awareness(server, store);

  registerBuiltApp(server, SHELL_APP, options.shellHtmlPath);

  registerAppTool(
    server,
    "open_app",
    {
      title: "Open an app",
      description:
        `Show your HTML app (inline <style>/<script>, ≤ ${APP_HTML_MAX_BYTES / 1024} KiB; recipe custom-apps) on a channel. ` +
        "name: a saved app instead; neither: list them (after: the next page).",
      inputSchema: compactSchema(openAppInput),
      outputSchema: compactSchema(openAppOutput),
      _meta: { ui: { resourceUri: SHELL_APP.uri } },
    },
    guarded(async ({ html, name, title, channel_id, after }) => {
      if (html !== undefined && name !== undefined) return messageError("INVALID_ARGUMENTS", "pass html (a new app) or name (a saved app), not both");
      if (html === undefined && name === undefined) return await listResult(store, after);
      if (after !== undefined) return messageError("INVALID_ARGUMENTS", "after pages the list of saved apps: pass it without html or name");
      const channelId = channel_id === undefined ? mintChannelId() : assertChannelId(channel_id);
      const saved = name === undefined ? undefined : await findSavedApp(store, name);
      const app: ChannelApp = {
        title: checkTitle(title, saved?.title ?? DEFAULT_APP_TITLE),
        html: saved?.html ?? checkFragment(html ?? ""),
        name: saved?.name ?? null,
        opened_at: new Date().toISOString(),
      };
      await writeChannelApp(store, channelId, app);
      await awareness.useChannel(channelId, "channel", true, app.title);
      const opened = await openedChannel("app", channelId, { ...options, client: options.client ?? FULL_VIEW });
      const what = saved ? `the saved app ${saved.name} ("${app.title}"; its note: ${saved.description})` : `"${app.title}"`;
      return toolResult(
        { channel_id: channelId, title: app.title, ...opened.structured, ...(saved ? { name: saved.name, description: saved.description } : {}) },
        `Opened ${what} on channel ${channelId}. ${opened.next}`,
      );
    }),
  );

  server.registerTool(
    "save_app",
    {
      title: "Save an app",
      description: "Keep the app on channel_id as name (A-Z a-z 0-9 _ -), with description: your note on what it does and its events.",
      inputSchema: compactSchema(saveAppInput),
      outputSchema: compactSchema(saveAppOutput),
    },
    guarded(async ({ channel_id, name, description }) => {
      const { app, replaced } = await saveChannelApp(store, channel_id, name, description);
      const uri = savedAppUri(app.name);
      return toolResult(
        { name: app.name, uri, replaced },
        `Saved "${app.title}" as ${app.name}${replaced ? " (it replaces the app saved under that name)" : ""}. ` +
          `Open it again, in any conversation, with open_app {"name": "${app.name}"}.`,
      );
    }),
  );

  // App only; it returns only what the model wrote itself.
  registerAppOnlyTool(
    server,
    "app_state",
    {
      title: "App state (app only)",
      description: "App only: the app (title and HTML) open on a channel, for the shell to run.",
      inputSchema: compactSchema(appStateInput),
      outputSchema: compactSchema(appStateOutput),
    },
    guarded(async ({ channel_id }) => {
      const app = await readChannelApp(store, channel_id);
      return toolResult(
        { channel_id, app, browser_tab: options.browser !== undefined },
        app ? `App "${app.title}" on channel ${channel_id}.` : `No app on channel ${channel_id}.`,
      );
    }),
  );

  server.registerResource(
    "saved-app",
    new ResourceTemplate("backchannel://apps/{name}", {
      // The first page by name: the SDK's resources/list passes no cursor to a template's list, and open_app pages through them all.
      list: async () => ({
        resources: (await listSavedApps(store)).apps.map((app) => ({
          uri: savedAppUri(app.name),
          name: app.name,
          title: app.title,
          description: app.description,
          mimeType: "application/json",
        })),
      }),
    }),
    {
      title: "backchannel saved app",
      description: `An app the agent wrote and the user kept: its title, note and HTML. Listed: the first ${SAVED_APP_LIST_PAGE} by name; open_app lists them all, a page at a time.`,
      mimeType: "application/json",
    },
    guardedRead(async (_uri, { name }) => {
      const app = await findSavedApp(store, String(name));
      return { contents: [{ uri: savedAppUri(app.name), mimeType: "application/json", text: JSON.stringify(app) }] };
    }),
  );
}

/** `open_app` without html or name: a page of the saved apps, read_recipe-style, saying how many there are and how to see the next. */
async function listResult(store: ChannelStore, after: string | undefined) {
  const { apps, total, more } = await listSavedApps(store, after);
  if (total === 0) {
    return toolResult(
      { apps, total, more },
      'No saved apps yet. Write one with open_app {"html": "..."} (read_recipe {"name": "custom-apps"}); keep it with save_app.',
    );
  }
  const lines = apps.map((app) => `- ${app.name}: ${app.title}. ${app.description}`);
  const shown = apps.length === total ? "" : ` (${apps.length} shown${after === undefined ? "" : ` after ${after}`})`;
  const next = more > 0 ? [`${more} more: open_app {"after": "${apps.at(-1)?.name ?? after}"} lists the next ones.`] : [];
  return toolResult(
    { apps, total, more },
    [`${total} saved app${total === 1 ? "" : "s"}${shown}; open one with open_app {"name": "<name>"}:`, ...lines, ...next].join("\n"),
  );
}
