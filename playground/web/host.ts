/**
 * The playground's host side: what Claude or VS Code do for an MCP App, in a page.
 *
 * - Two real MCP sessions to the real server over Streamable HTTP: one for the model
 *   (it calls `open_reader`, and the agent panel answers through it) and one for the
 *   app, as hosts keep them apart.
 * - The reader's HTML comes from the `ui://` resource the tool names, and runs in a
 *   sandboxed `srcdoc` iframe (opaque origin) under the default CSP hosts apply.
 * - ext-apps' `AppBridge` connects the iframe to the app's session, forwards its tool
 *   calls, and sends the tool input and result and the host context (theme, styles,
 *   the container's size, the display modes). Like Claude Desktop and VS Code, it puts
 *   an app's `ui/message` into the chat's input box for the person to send, and it
 *   shows the reader full screen when asked (`ui/request-display-mode`).
 *
 * Query: `?agent=off` turns the agent panel off, so another agent (a test, or a real
 * one with the watcher) reads the channel. The channel id is kept in the URL's hash:
 * a page reload shows the same channel again, as a chat re-opens a conversation (with
 * the stored tool result: its document and threads are never replaced). "Open a
 * document…" opens a file or pasted text in a new reader, on a new channel.
 *
 * `window.playground.callTool(name, args)` is a model's tool call made through this
 * host, for an agent outside the page (a test's scripted agent, or you in the
 * console): the call goes through the model's session and, when the tool names a
 * `ui://` resource (`open_app`), the host renders that app in the chat below the reader.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from "@modelcontextprotocol/client";
import {
  AppBridge,
  getToolUiResourceUri,
  PostMessageTransport,
  type McpUiDisplayMode,
  type McpUiHostContext,
  type McpUiStyles,
  type McpUiTheme,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { APPS_HOST_EXTENSIONS } from "../../protocol/client-capabilities.js";
import type { ReaderState } from "../../protocol/reader.js";
import { startAgentPanel, type AgentPanel } from "./agent.js";
import { putInChatBox, setUpChatBox } from "./chat-box.js";
import { setUpOpenPanel } from "./open-panel.js";
import sample from "./sample.md?raw";
import "./style.css";

/** The CSP hosts apply to an app that declares no `_meta.ui.csp` (docs/ARCHITECTURE.md, "Hosts"): no network at all. */
const APP_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'";

/** Style variables the host hands the app for each theme (a few of the ~75 real hosts send). */
const PALETTES: Record<McpUiTheme, Partial<McpUiStyles>> = {
  light: {
    "--color-background-primary": "#ffffff",
    "--color-background-secondary": "#f4f4f5",
    "--color-text-primary": "#18181b",
    "--color-text-secondary": "#6b6b73",
    "--color-border-primary": "#dedee3",
    "--color-ring-primary": "#2563eb",
    "--font-sans": "system-ui, sans-serif",
  },
  dark: {
    "--color-background-primary": "#1b1b1f",
    "--color-background-secondary": "#26262b",
    "--color-text-primary": "#ececf1",
    "--color-text-secondary": "#9d9da8",
    "--color-border-primary": "#34343b",
    "--color-ring-primary": "#7aa2ff",
    "--font-sans": "system-ui, sans-serif",
  },
};

const HOST_INFO = { name: "backchannel-playground", version: "0.1.0" };
const params = new URLSearchParams(location.search);
let theme: McpUiTheme = params.get("theme") === "dark" ? "dark" : "light";
let displayMode: McpUiDisplayMode = "inline";
let bridge: AppBridge | undefined;
/** Every app rendered in the page, to hand each a change of the host context; true for the reader. */
const bridges = new Map<AppBridge, boolean>();
let agentPanel: AgentPanel | undefined;
let modelClient: Client;
let appClient: Client;
let uri: string;
/** What the reader shows now: the tool call a chat would replay when it re-renders it. */
let shown: { input: Record<string, unknown>; result: CallToolResult; channelId: string } | undefined;

declare global {
  interface Window {
    /** The host's side for agents outside the page. */
    playground?: { callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> };
  }
}

try {
  modelClient = await connect("playground-model");
  appClient = await connect("playground-app");
  const { tools } = await appClient.listTools();
  const found = getToolUiResourceUri(tools.find((tool) => tool.name === "open_reader") ?? {});
  if (!found) throw new Error("open_reader names no ui:// resource");
  uri = found;
  window.playground = {
    async callTool(name, args) {
      const result = (await modelClient.callTool({ name, arguments: args })) as CallToolResult;
      const appUri = getToolUiResourceUri(tools.find((tool) => tool.name === name) ?? {});
      if (appUri) await showToolApp(appClient, name, appUri, args, result);
      return result;
    },
  };
  const hashChannel = location.hash.length > 1 ? location.hash.slice(1) : undefined;
  const existing = hashChannel ? await storedToolResult(hashChannel) : undefined;
  if (existing) await show(existing.input, existing.result);
  else await openDocument({ title: "How backchannel works", markdown: sample, ...(hashChannel ? { channel_id: hashChannel } : {}) });
  element("rerender").addEventListener("click", () => void remount());
  element("theme").addEventListener("click", toggleTheme);
  setUpChatBox((text) => agentPanel?.chat(text));
  setUpOpenPanel((args) => openDocument(args), showError);
  addEventListener("resize", () => {
    for (const [each, reader] of bridges) each.setHostContext(hostContext(reader));
  });
  applyPageTheme();
} catch (error) {
  showError(error as Error);
}

/** A client connected to this page's server, as a new session. */
async function connect(name: string): Promise<Client> {
  // The 2026-07-28 protocol is POST-only: no GET for a server-sent stream, which this stateless server answers with 405 (two errors in the console on every load).
  // A host that renders apps says so (the MCP Apps extension): the server offers the app-only tools only then.
  const client = new Client(
    { name, version: HOST_INFO.version },
    { capabilities: { extensions: APPS_HOST_EXTENSIONS }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  return client;
}

/**
 * The tool result a chat stored for `channelId` when the agent opened it, rebuilt from
 * the channel's state; undefined when the channel holds no document (then the sample
 * is opened on it). A channel opened elsewhere keeps its document and its threads.
 */
async function storedToolResult(channelId: string): Promise<{ input: Record<string, unknown>; result: CallToolResult } | undefined> {
  const { document } = await readerState(channelId);
  if (!document) return undefined;
  const structured = { channel_id: channelId, title: document.title, words: document.words, watch_command: watchCommandOf(channelId) };
  return {
    input: { channel_id: channelId },
    result: { content: [{ type: "text", text: `Opened "${document.title}" in the reader on channel ${channelId}.` }], structuredContent: structured },
  };
}

/**
 * The watch command for `channelId`, as `open_reader` would name it: the playground's
 * server puts its command into the page (`#watch-command`); a page served otherwise
 * (the cluster's nginx) gets the plain command, for the store the environment chooses.
 */
function watchCommandOf(channelId: string): string {
  const given = document.getElementById("watch-command")?.textContent;
  return given ? (JSON.parse(given) as string).replace("CHANNEL_ID", channelId) : `backchannel watch ${channelId}`;
}

/** The channel's reader state, read through the app's session as the reader reads it (`reader_state` is app-only). */
async function readerState(channelId: string): Promise<ReaderState> {
  const state = (await appClient.callTool({ name: "reader_state", arguments: { channel_id: channelId } })) as CallToolResult;
  if (state.isError) throw new Error(`reader_state failed: ${JSON.stringify(state.content)}`);
  return state.structuredContent as unknown as ReaderState;
}

/** Calls `open_reader` as the model would (a new channel unless `args` names one) and shows its reader. */
async function openDocument(args: Record<string, unknown>): Promise<void> {
  const opened = (await modelClient.callTool({ name: "open_reader", arguments: args })) as CallToolResult;
  if (opened.isError) throw new Error(`open_reader failed: ${JSON.stringify(opened.content)}`);
  await show(args, opened);
}

/** Shows the reader of a tool call, and points the agent panel at its channel. */
async function show(input: Record<string, unknown>, result: CallToolResult): Promise<void> {
  const { channel_id: channelId, watch_command: watchCommand } = result.structuredContent as { channel_id: string; watch_command: string };
  shown = { input, result, channelId };
  history.replaceState(null, "", `${location.search}#${channelId}`);
  await remount();
  // Named once its reader is in place: whoever waits for the new channel's name then finds its frame, not the one before.
  element("channel").textContent = channelId;
  element("watch").textContent = watchCommand;
  agentPanel?.stop();
  if (params.get("agent") === "off") {
    element("agent-off").hidden = false;
    element("agent-on").hidden = true;
  } else {
    agentPanel = startAgentPanel(modelClient, channelId, () => readerState(channelId).then((state) => state.threads), showError);
  }
}

async function remount(): Promise<void> {
  if (shown) await mountReader(appClient, uri, shown.input, shown.result).catch(showError);
}

/** Renders the reader in the page's frame, replacing the one before (full screen ends). */
async function mountReader(client: Client, uri: string, input: Record<string, unknown>, result: CallToolResult): Promise<void> {
  setDisplayMode("inline");
  bridge = await mountApp(client, uri, input, result, element("frame"), "Reader", bridge, true);
}

/**
 * Shows the app of a tool call in the chat, below what is there: a bubble that names
 * the call, with a button that re-renders the app, and the app itself.
 */
async function showToolApp(client: Client, name: string, uri: string, input: Record<string, unknown>, result: CallToolResult): Promise<void> {
  const bubble = document.createElement("div");
  bubble.className = "bubble";
  const rerender = Object.assign(document.createElement("button"), { type: "button", textContent: "Re-render" });
  bubble.append("The agent called ", Object.assign(document.createElement("code"), { textContent: name }), ". ", rerender);
  const frame = document.createElement("div");
  frame.className = "app-frame";
  const call = document.createElement("div");
  call.className = "tool-app";
  call.append(bubble, frame);
  element("chat").before(call);
  let app = await mountApp(client, uri, input, result, frame, name);
  rerender.addEventListener("click", () => {
    mountApp(client, uri, input, result, frame, name, app).then((next) => (app = next), showError);
  });
}

/**
 * Renders an app in a fresh iframe in `container`, replacing `previous`, as a host does
 * when a conversation is re-opened: read the resource, connect the bridge, then hand the
 * app the tool's input and result once it has initialized. Like Claude Desktop and VS
 * Code, the host puts an app's `ui/message` into the chat's input box for the person to
 * send; the reader (`fullscreen`) may also ask to be shown full screen.
 */
async function mountApp(
  client: Client,
  uri: string,
  input: Record<string, unknown>,
  result: CallToolResult,
  container: HTMLElement,
  title: string,
  previous?: AppBridge,
  fullscreen = false,
): Promise<AppBridge> {
  if (previous) {
    bridges.delete(previous);
    await previous.close();
  }
  const { contents } = await client.readResource({ uri });
  const html = contents[0] && "text" in contents[0] ? contents[0].text : "";
  const iframe = document.createElement("iframe");
  iframe.title = title;
  // Scripts only: an opaque origin that cannot reach this page, like hosts' sandboxes.
  iframe.sandbox.add("allow-scripts");
  container.replaceChildren(iframe);

  const capabilities = { openLinks: {}, serverTools: {}, logging: {}, message: { text: {} } };
  const next = new AppBridge(client, HOST_INFO, capabilities, { hostContext: hostContext(fullscreen) });
  next.onopenlink = async ({ url }) => {
    window.open(url, "_blank", "noopener,noreferrer");
    return {};
  };
  next.onsizechange = ({ height }) => {
    // Full screen, the window sets the height (the style sheet); inline, the app does.
    if (height !== undefined) iframe.style.height = fullscreen && displayMode === "fullscreen" ? "" : `${Math.ceil(height)}px`;
  };
  next.onmessage = async ({ content }) => {
    putInChatBox(content.map((block) => (block.type === "text" ? block.text : "")).join("\n"));
    return {};
  };
  if (fullscreen)
    next.onrequestdisplaymode = async ({ mode }) => {
      setDisplayMode(mode === "fullscreen" ? "fullscreen" : "inline");
      next.setHostContext(hostContext(true));
      return { mode: displayMode };
    };
  next.oninitialized = () => {
    void next.sendToolInput({ arguments: input });
    void next.sendToolResult(result);
  };
  // Listen before the document loads, so the app's first message is not missed.
  await next.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  bridges.set(next, fullscreen);
  iframe.srcdoc = html.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${APP_CSP}">`);
  return next;
}

function setDisplayMode(mode: McpUiDisplayMode): void {
  displayMode = mode;
  element("frame").classList.toggle("fullscreen", mode === "fullscreen");
  const iframe = element("frame").querySelector("iframe");
  if (iframe && mode === "fullscreen") iframe.style.height = "";
}

/** The host context of the reader (`reader`: its container and display modes too) or of another app. */
function hostContext(reader: boolean): McpUiHostContext {
  // Variables a host leaves out are simply absent; the type lists every key as string | undefined.
  if (!reader)
    return { theme, styles: { variables: PALETTES[theme] as McpUiStyles }, displayMode: "inline", platform: "web", locale: navigator.language };
  const fullscreen = displayMode === "fullscreen";
  return {
    theme,
    styles: { variables: PALETTES[theme] as McpUiStyles },
    displayMode,
    availableDisplayModes: ["inline", "fullscreen"],
    // Inline, the reader may be as tall as most of the window; full screen, it is the window.
    containerDimensions: fullscreen
      ? { height: window.innerHeight, width: window.innerWidth }
      : { maxHeight: Math.max(360, window.innerHeight - 140), maxWidth: element("frame").clientWidth || window.innerWidth },
    platform: "web",
    locale: navigator.language,
  };
}

function toggleTheme(): void {
  theme = theme === "light" ? "dark" : "light";
  applyPageTheme();
  for (const [each, reader] of bridges) each.setHostContext(hostContext(reader));
}

function applyPageTheme(): void {
  document.documentElement.dataset.theme = theme;
  element("theme").textContent = theme === "light" ? "Dark theme" : "Light theme";
}

function showError(error: Error): void {
  const box = element("error");
  box.hidden = false;
  box.textContent = `${error.message}`;
  console.error(error);
}

function element(id: string): HTMLElement {
  return document.getElementById(id)!;
}
