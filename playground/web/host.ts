/**
 * The playground's host side: what Claude or VS Code do for an MCP App, in a page.
 *
 * - Two real MCP sessions to the real server over Streamable HTTP: one for the model
 *   (it calls `open_reader`, and the agent panel answers through it) and one for the
 *   app, as hosts keep them apart.
 * - The reader's HTML comes from the `ui://` resource the tool names, and runs in a
 *   sandboxed `srcdoc` iframe (opaque origin) under the default CSP hosts apply.
 * - ext-apps' `AppBridge` connects the iframe to the app's session, forwards its tool
 *   calls, and sends the tool input and result and the host context (theme, styles).
 *
 * Query: `?agent=off` turns the agent panel off, so another agent (a test, or a real
 * one with the watcher) reads the channel. The channel id is kept in the URL's hash:
 * a page reload re-opens the same channel and the reader restores its threads.
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
  type McpUiHostContext,
  type McpUiStyles,
  type McpUiTheme,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { startAgentPanel } from "./agent.js";
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
/** Every app rendered in the page, to hand each a theme change. */
const bridges = new Set<AppBridge>();

declare global {
  interface Window {
    /** The host's side for agents outside the page. */
    playground?: { callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> };
  }
}

try {
  const modelClient = await connect("playground-model");
  const appClient = await connect("playground-app");
  const openArgs = { title: "How backchannel works", markdown: sample, ...(location.hash.length > 1 ? { channel_id: location.hash.slice(1) } : {}) };
  const opened = (await modelClient.callTool({ name: "open_reader", arguments: openArgs })) as CallToolResult;
  if (opened.isError) throw new Error(`open_reader failed: ${JSON.stringify(opened.content)}`);
  const { channel_id: channelId, watch_command: watchCommand } = opened.structuredContent as { channel_id: string; watch_command: string };
  history.replaceState(null, "", `#${channelId}`);
  element("channel").textContent = channelId;
  element("watch").textContent = watchCommand;

  const { tools } = await appClient.listTools();
  const uri = getToolUiResourceUri(tools.find((tool) => tool.name === "open_reader") ?? {});
  if (!uri) throw new Error("open_reader names no ui:// resource");
  let reader: AppBridge | undefined;
  const mount = () =>
    mountApp(appClient, uri, openArgs, opened, element("frame"), "Reader", reader).then((next) => {
      reader = next;
    }, showError);
  await mount();
  window.playground = {
    async callTool(name, args) {
      const result = (await modelClient.callTool({ name, arguments: args })) as CallToolResult;
      const appUri = getToolUiResourceUri(tools.find((tool) => tool.name === name) ?? {});
      if (appUri) await showToolApp(appClient, name, appUri, args, result);
      return result;
    },
  };
  element("rerender").addEventListener("click", () => void mount());
  element("theme").addEventListener("click", toggleTheme);
  applyPageTheme();

  if (params.get("agent") === "off") {
    element("agent-off").hidden = false;
    element("agent-on").hidden = true;
  } else {
    startAgentPanel(modelClient, channelId, showError);
  }
} catch (error) {
  showError(error as Error);
}

/** A client connected to this page's server, as a new session. */
async function connect(name: string): Promise<Client> {
  const client = new Client({ name, version: HOST_INFO.version });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  return client;
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
  element("host").append(call);
  let bridge = await mountApp(client, uri, input, result, frame, name);
  rerender.addEventListener("click", () => {
    mountApp(client, uri, input, result, frame, name, bridge).then((next) => (bridge = next), showError);
  });
}

/**
 * Renders an app in a fresh iframe in `container`, replacing `previous`, as a host does
 * when a conversation is re-opened: read the resource, connect the bridge, then hand the
 * app the tool's input and result once it has initialized.
 */
async function mountApp(
  client: Client,
  uri: string,
  input: Record<string, unknown>,
  result: CallToolResult,
  container: HTMLElement,
  title: string,
  previous?: AppBridge,
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

  const next = new AppBridge(client, HOST_INFO, { openLinks: {}, serverTools: {}, logging: {} }, { hostContext: hostContext() });
  next.onopenlink = async ({ url }) => {
    window.open(url, "_blank", "noopener,noreferrer");
    return {};
  };
  next.onsizechange = ({ height }) => {
    if (height !== undefined) iframe.style.height = `${Math.ceil(height)}px`;
  };
  next.oninitialized = () => {
    void next.sendToolInput({ arguments: input });
    void next.sendToolResult(result);
  };
  // Listen before the document loads, so the app's first message is not missed.
  await next.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  bridges.add(next);
  iframe.srcdoc = html.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${APP_CSP}">`);
  return next;
}

function hostContext(): McpUiHostContext {
  // Variables a host leaves out are simply absent; the type lists every key as string | undefined.
  return { theme, styles: { variables: PALETTES[theme] as McpUiStyles }, displayMode: "inline", platform: "web", locale: navigator.language };
}

function toggleTheme(): void {
  theme = theme === "light" ? "dark" : "light";
  applyPageTheme();
  for (const bridge of bridges) bridge.setHostContext(hostContext());
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
