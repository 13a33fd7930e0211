/**
 * The browser host's page: a real MCP Apps host (./app-frame.ts) over the host's MCP
 * endpoint (`mcp`, Streamable HTTP, beside the page), in one of two modes that the host
 * names in the page (`<meta name="backchannel-page">`):
 *
 * - `host` (`backchannel web`, and the host servers start for clients that show no
 *   apps): it shows the app open on the channel the URL's hash names, as a chat would
 *   show the tool call that opened it (its document and threads, or the agent's app),
 *   and lists the open channels when the hash names none. The agent is elsewhere (in a
 *   terminal); the page is only the app's side.
 * - `playground` (`npm start`, and a page served without the meta, as the cluster's
 *   nginx serves it): a chat with the reader open on a sample document, and an "agent"
 *   panel in which the person plays the agent (./agent.ts). It holds two MCP sessions,
 *   one for the model and one for the app, as hosts keep them apart. Query: `?agent=off`
 *   turns the panel off, so that another agent reads the channel.
 *
 * In both, the channel id is in the URL's hash: a reload shows the same channel again,
 * as a chat re-opens a conversation (with its stored tool result: its document and
 * threads are never replaced).
 *
 * `window.playground.callTool(name, args)` (playground) is a model's tool call made
 * through this host, for an agent outside the page (a test's scripted agent, or you in
 * the console): when the tool names a `ui://` resource (`open_app`), the host renders
 * that app in the chat below the reader.
 */
import { type CallToolResult, Client, type DiscoverResult, StreamableHTTPClientTransport, type Tool } from "@modelcontextprotocol/client";
import { type AppBridge, getToolUiResourceUri, type McpUiTheme } from "@modelcontextprotocol/ext-apps/app-bridge";
import { APPS_HOST_EXTENSIONS, BROWSER_HOST_NAME } from "../../protocol/client-capabilities.js";
import type { ReaderState } from "../../protocol/reader.js";
import type { AgentPanel } from "./agent.js";
import { type AheadApp, type AppCall, AppFrames, readAppResource } from "./app-frame.js";
import { putInChatBox, setUpChatBox } from "./chat-box.js";
import { showChannelList } from "./landing.js";
import { setUpOpenPanel } from "./open-panel.js";
import sample from "./sample.md?raw";
import "./style.css";

/** What the host tells the page about itself. */
interface PageConfig {
  mode: "host" | "playground";
  /** The watcher command for this store, `CHANNEL_ID` standing for the channel (playground: shown with `?agent=off`). */
  watch?: string;
  /** The `ui://` resource of each app-opening tool, so that the page need not list the tools first. */
  resources?: Record<string, string>;
  /** The MCP endpoint's answer to `server/discover`, adopted instead of asking it again. */
  discover?: DiscoverResult;
  /** The `ui://` resource of the app whose frame the page's first script started on a link (the reader's; web/page-files.ts). */
  aheadApp?: string;
}

const config = pageConfig();
const params = new URLSearchParams(location.search);
const frames = new AppFrames({
  hostName: config.mode === "host" ? BROWSER_HOST_NAME : "backchannel-playground",
  ...(config.mode === "playground" ? { onmessage: putInChatBox, roomBelow: composerRoom } : {}),
});
frames.theme = params.get("theme") === "dark" ? "dark" : "light";
let appClient: Client;
/** The app session's tools (their `ui://` resources), listed once, when the host did not name the resources. */
let appTools: Promise<Tool[]> | undefined;
/** What the main frame shows now: the tool call a chat would replay when it re-renders it. */
let shown: { call: AppCall; channelId: string; title: string } | undefined;
let mainBridge: AppBridge | undefined;
/** Playground: points the agent panel at the channel shown (set once the playground runs). */
let pointAgentPanel: (channelId: string, result: CallToolResult) => void = () => undefined;

document.body.dataset.mode = config.mode;
element("rerender").addEventListener("click", () => void remount());
element("theme").addEventListener("click", toggleTheme);
applyPageTheme();
// A link names a channel, whose app the page shows: its frame loads while the page connects and reads the channel.
if (config.mode === "host" && hashChannel() !== undefined) frames.preload(element("frame"), config.aheadApp);
else window.backchannelAhead?.stop();
try {
  appClient = await connect(`${config.mode}-app`);
  if (config.mode === "playground") await startPlayground();
  else {
    addEventListener("hashchange", () => void showHashChannel().catch(showError));
    await showHashChannel();
  }
} catch (error) {
  showError(error as Error);
}

/** A client connected to the host's MCP endpoint, as a new session of an MCP Apps host. */
async function connect(name: string): Promise<Client> {
  // The 2026-07-28 protocol is POST-only: no GET for a server-sent stream, which this stateless server answers with 405 (two errors in the console on every load).
  // A host that renders apps says so (the MCP Apps extension): the server offers the app-only tools only then.
  const client = new Client(
    { name, version: "0.1.0" },
    { capabilities: { extensions: APPS_HOST_EXTENSIONS }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL("mcp", location.href));
  await client.connect(transport, config.discover ? { prior: { kind: "modern", discover: config.discover } } : undefined);
  return client;
}

/** The `ui://` resource `tool` renders. @throws Error when the server names none (an old build). */
async function resourceOf(tool: string): Promise<string> {
  const uri = await uiResourceOf(tool);
  if (!uri) throw new Error(`${tool} names no ui:// resource`);
  return uri;
}

/** Host mode: the app on the channel the hash names, or the list of open channels. */
async function showHashChannel(): Promise<void> {
  element("error").hidden = true;
  const channelId = hashChannel();
  element("landing").hidden = channelId !== undefined;
  if (channelId === undefined) {
    await mainBridge?.close();
    mainBridge = undefined;
    shown = undefined;
    element("frame").replaceChildren();
    setTitle("backchannel", "Apps your agent opened, in your browser");
    await showChannelList(element("channels"));
    return;
  }
  // The page's first app, on a link: most are a reader's, so the reader starts (hidden) while the channel is read.
  const ahead = mainBridge === undefined && shown === undefined ? readerAhead() : undefined;
  const call = await storedToolCall(channelId).catch(async (error: Error) => {
    await ahead?.cancel();
    throw error;
  });
  if (!call) {
    await ahead?.cancel();
    element("frame").replaceChildren();
    setTitle("backchannel", "");
    throw new Error(
      `Nothing is open on channel ${channelId} here: it may have been closed after a week unused, or belong to another store. Ask the agent to open it again.`,
    );
  }
  await show(call, ahead);
}

/** The reader, started ahead in the main frame, in which the page's first script loaded it ({@link AppFrames.mountAhead}); none without that. */
function readerAhead(): AheadApp | undefined {
  const uri = config.resources?.open_reader;
  return uri && uri === config.aheadApp ? frames.mountAhead(appClient, uri, element("frame"), true) : undefined;
}

/** The `ui://` resource `tool` names, if any: as the host named it, else from the tools' list. */
async function uiResourceOf(tool: string): Promise<string | undefined> {
  const named = config.resources?.[tool];
  if (named !== undefined) return named;
  appTools ??= appClient.listTools().then(({ tools }) => tools);
  return getToolUiResourceUri((await appTools).find((each) => each.name === tool) ?? {});
}

/**
 * The tool call a chat stored for `channelId` when the agent opened it, rebuilt from the
 * channel's state: its reader's document, else its app; undefined when it has neither.
 */
async function storedToolCall(channelId: string): Promise<{ call: AppCall; channelId: string; title: string } | undefined> {
  // The channel's state, and the reader's HTML while it comes (most links are a reader's: an app's leaves it unused).
  // The state is asked for as the reader asks for it first (compressed: the page needs only the title and size, and a
  // long text, whole, would take the page's thread while the app loads), so that the reader's first call is answered with it.
  const stateArgs = { channel_id: channelId, gzip: true };
  const readerUri = config.resources?.open_reader;
  // Not when the page's first script loaded the reader: its frame has it (or, once that frame is gone, mount reads it).
  const resource = readerUri === undefined || readerUri === config.aheadApp ? undefined : readAppResource(appClient, readerUri);
  resource?.catch(() => undefined);
  // Sent as the app's calls are (ext-apps' AppBridge): `callTool` would list the tools first, to check the result against its schema.
  const stateResult = await appClient.request({ method: "tools/call", params: { name: "reader_state", arguments: stateArgs } });
  const { document } = structuredOf<ReaderState>("reader_state", stateResult);
  const input = { channel_id: channelId };
  if (document) {
    const structured = { channel_id: channelId, title: document.title, words: document.words, ...watchField(channelId) };
    const result = {
      content: [{ type: "text" as const, text: `Opened "${document.title}" in the reader on channel ${channelId}.` }],
      structuredContent: structured,
    };
    const uri = await resourceOf("open_reader");
    const early = {
      ...(uri === readerUri && resource ? { resource } : {}),
      toolCall: { name: "reader_state", arguments: stateArgs, result: stateResult },
    };
    return { call: { client: appClient, uri, input, result, early }, channelId, title: document.title };
  }
  const { app } = await appCall<{ app: { title: string } | null }>("app_state", { channel_id: channelId });
  if (!app) return undefined;
  const structured = { channel_id: channelId, title: app.title, ...watchField(channelId) };
  const result = { content: [{ type: "text" as const, text: `Opened "${app.title}" on channel ${channelId}.` }], structuredContent: structured };
  return { call: { client: appClient, uri: await resourceOf("open_app"), input, result }, channelId, title: app.title };
}

/** The watch command for `channelId` as `open_reader` would name it, where the host gave the page one. */
function watchField(channelId: string): { watch_command?: string } {
  return config.watch ? { watch_command: config.watch.replace("CHANNEL_ID", channelId) } : {};
}

/** An app-only call through the app's session (as the app itself would make it), its structured result. */
async function appCall<T>(name: string, args: Record<string, unknown>): Promise<T> {
  return structuredOf<T>(name, (await appClient.callTool({ name, arguments: args })) as CallToolResult);
}

/** The structured result of a call of `name`. @throws Error with the tool's text when it failed. */
function structuredOf<T>(name: string, result: CallToolResult): T {
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** Shows the app of a tool call in the main frame, and points the URL (and, in the playground, the agent panel) at its channel. */
async function show(opened: { call: AppCall; channelId: string; title: string }, ahead?: AheadApp): Promise<void> {
  shown = opened;
  history.replaceState(null, "", `${location.search}#${opened.channelId}`);
  setTitle(opened.title, config.mode === "host" ? `Channel ${opened.channelId}` : playgroundHint());
  await remount(ahead);
  // Named once its app is in place: whoever waits for the new channel's name then finds its frame, not the one before.
  element("channel").textContent = opened.channelId;
  if (config.mode === "playground") pointAgentPanel(opened.channelId, opened.call.result);
}

/** (Re-)renders the app shown in the main frame; `ahead`: an app started ahead there, shown when it is this call's, else dropped. */
async function remount(ahead?: AheadApp): Promise<void> {
  if (!shown) return;
  const { call, title } = shown;
  const rendered =
    ahead && ahead.uri === call.uri && ahead.client === call.client
      ? ahead.show(call, title)
      : (ahead?.cancel() ?? Promise.resolve()).then(() => frames.mount(call, element("frame"), title, mainBridge, true));
  mainBridge = await rendered.catch((error: Error) => {
    showError(error);
    return undefined;
  });
}

/** Playground mode: the model's session, the sample (or the channel the hash names), the chat and the agent panel. */
async function startPlayground(): Promise<void> {
  // Only the playground has the agent panel (and its markdown renderer): the host's page never evaluates it.
  const [modelClient, { startAgentPanel }] = await Promise.all([connect("playground-model"), import("./agent.js")]);
  let agentPanel: AgentPanel | undefined;
  pointAgentPanel = (channelId, result) => {
    element("watch").textContent = (result.structuredContent as { watch_command?: string } | undefined)?.watch_command ?? "";
    agentPanel?.stop();
    if (params.get("agent") === "off") {
      element("agent-off").hidden = false;
      element("agent-on").hidden = true;
    } else {
      const threads = () => appCall<ReaderState>("reader_state", { channel_id: channelId }).then((state) => state.threads);
      agentPanel = startAgentPanel(modelClient, channelId, threads, showError);
    }
  };
  const openDocument = async (args: Record<string, unknown>) => {
    const result = (await modelClient.callTool({ name: "open_reader", arguments: args })) as CallToolResult;
    if (result.isError) throw new Error(`open_reader failed: ${JSON.stringify(result.content)}`);
    const { channel_id: channelId, title } = result.structuredContent as { channel_id: string; title: string };
    await show({ call: { client: appClient, uri: await resourceOf("open_reader"), input: args, result }, channelId, title });
  };
  window.playground = {
    async callTool(name, args) {
      const result = (await modelClient.callTool({ name, arguments: args })) as CallToolResult;
      const uri = await uiResourceOf(name);
      if (uri) await showToolApp(name, { client: appClient, uri, input: args, result });
      return result;
    },
  };
  setUpChatBox((text) => agentPanel?.chat(text));
  setUpOpenPanel(openDocument, showError);
  const channelId = hashChannel();
  const existing = channelId ? await storedToolCall(channelId) : undefined;
  if (existing) return show(existing);
  if (channelId)
    showError(
      new Error(
        `Nothing is open on channel ${channelId} in the playground's store, so the sample opens on a new channel. A channel of another store shows with --home.`,
      ),
    );
  await openDocument({ title: "How backchannel works", markdown: sample });
}

/** Playground: what the header says of the page, with the agent panel on or off (`?agent=off`). */
function playgroundHint(): string {
  return params.get("agent") === "off"
    ? "A chat with the reader; an agent elsewhere reads this channel"
    : "A chat with the reader; you play the agent in the panel";
}

/** Playground: shows the app of a model's tool call in the chat, below what is there, with a button that re-renders it. */
async function showToolApp(name: string, call: AppCall): Promise<void> {
  const bubble = document.createElement("div");
  bubble.className = "bubble";
  const rerender = Object.assign(document.createElement("button"), { type: "button", textContent: "Re-render" });
  bubble.append("The agent called ", Object.assign(document.createElement("code"), { textContent: name }), ". ", rerender);
  const frame = document.createElement("div");
  frame.className = "app-frame";
  const container = document.createElement("div");
  container.className = "tool-app";
  container.append(bubble, frame);
  element("chat").before(container);
  let bridge = await frames.mount(call, frame, name);
  rerender.addEventListener("click", () => {
    frames.mount(call, frame, name, bridge).then((next) => (bridge = next), showError);
  });
}

/** Playground: the room the chat box takes below the reader (its height and margin), so that it shows without scrolling. */
function composerRoom(): number {
  const composer = element("composer");
  return composer.offsetHeight + Number.parseFloat(getComputedStyle(composer).marginTop);
}

/** The channel id in the URL's hash, if any. */
function hashChannel(): string | undefined {
  return location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : undefined;
}

/** What the host says about this page; a page without it (served by another server) is the playground. */
function pageConfig(): PageConfig {
  const text = document.querySelector<HTMLMetaElement>('meta[name="backchannel-page"]')?.content;
  if (!text) return { mode: "playground" };
  const parsed = JSON.parse(text) as Partial<PageConfig>;
  const resources = Object.entries(parsed.resources ?? {}).filter(([, uri]) => typeof uri === "string" && uri.startsWith("ui://"));
  return {
    mode: parsed.mode === "host" ? "host" : "playground",
    ...(typeof parsed.watch === "string" ? { watch: parsed.watch } : {}),
    ...(resources.length > 0 ? { resources: Object.fromEntries(resources) } : {}),
    ...(isDiscoverResult(parsed.discover) ? { discover: parsed.discover } : {}),
    ...(typeof parsed.aheadApp === "string" ? { aheadApp: parsed.aheadApp } : {}),
  };
}

/** Whether `value` looks like a `server/discover` answer (the host's, adopted as it is; one that is not makes the page ask). */
function isDiscoverResult(value: unknown): value is DiscoverResult {
  return typeof value === "object" && value !== null && Array.isArray((value as { supportedVersions?: unknown }).supportedVersions);
}

function setTitle(title: string, hint: string): void {
  element("page-title").textContent = title;
  element("page-hint").textContent = hint;
  document.title = config.mode === "host" ? `${title} · backchannel` : "backchannel playground";
}

function toggleTheme(): void {
  frames.theme = frames.theme === "light" ? "dark" : "light";
  applyPageTheme();
  frames.refresh();
}

function applyPageTheme(): void {
  const theme: McpUiTheme = frames.theme;
  document.documentElement.dataset.theme = theme;
  element("theme").textContent = theme === "light" ? "Dark theme" : "Light theme";
}

function showError(error: Error): void {
  const box = element("error");
  box.hidden = false;
  box.textContent = error.message;
  console.error(error);
}

function element(id: string): HTMLElement {
  return document.getElementById(id)!;
}

declare global {
  interface Window {
    /** The host's side for agents outside the page (playground). */
    playground?: { callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> };
  }
}
