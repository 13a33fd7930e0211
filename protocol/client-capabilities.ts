/**
 * What a client declares it can do, in the words both ends use: the MCP Apps extension
 * (a client that renders apps, and whose apps call the app-only tools) and backchannel's
 * own extension for a client that calls the app-only tools without rendering anything
 * (`watch --url`). The server offers the app-only tools only to a client that declares
 * one of them (docs/ARCHITECTURE.md, "Clients").
 *
 * This module imports nothing: the browser page, the command line and the server share it.
 */

/** The MCP Apps extension's key in `capabilities.extensions` (ext-apps' `EXTENSION_ID`). */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an MCP App's HTML resource (ext-apps' `RESOURCE_MIME_TYPE`). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/** backchannel's extension for a client that calls the app-only tools but renders no app (the remote watcher). */
export const APP_SIDE_EXTENSION = "io.github.backchannel-mcp/app-side";

/** The `extensions` an MCP Apps host declares: it renders apps of {@link APP_MIME_TYPE}. */
export const APPS_HOST_EXTENSIONS: Record<string, { mimeTypes: string[] }> = { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } };

/** The `extensions` of a client that calls the app-only tools without rendering apps. */
export const APP_SIDE_EXTENSIONS: Record<string, Record<string, never>> = { [APP_SIDE_EXTENSION]: {} };

/**
 * The name backchannel's own browser host gives itself as an MCP Apps host (its
 * `hostInfo`): an app that finds itself there does not offer to open itself in a
 * browser tab, as it is in one.
 */
export const BROWSER_HOST_NAME = "backchannel-browser";
