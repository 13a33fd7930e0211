/**
 * The app shell, an MCP App that runs apps the agent writes. Order of events:
 * 1. register the host handlers, then `await app.connect()` (hosts keep the iframe
 *    hidden until the handshake is done); apply the host's theme and fonts;
 * 2. the host delivers `open_app`'s result, which names the channel (or, for
 *    `open_app` without an app, lists the saved apps: they are shown as text);
 * 3. the shell fetches the app through the app-only `app_state` (also after a
 *    re-render), puts `backchannel` and `app` on `window`, runs the fragment's scripts
 *    in order, starts receiving, then sends `ready`.
 * Errors of the app go to the agent as `app_error` (./errors.ts).
 */
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type McpUiHostContext } from "@modelcontextprotocol/ext-apps";
import { AppChannel, textOf, type ChannelState, type ChannelWall } from "../channel.js";
import { createBackchannel, type Backchannel } from "./api.js";
import type { AppErrorData } from "../../protocol/app-shell.js";
import { ErrorReporter } from "./errors.js";
import { runFragment } from "./fragment.js";
import { PopOut } from "../pop-out.js";
import "./style.css";

declare global {
  interface Window {
    /** The channel to the agent, for the app's scripts. */
    backchannel?: Backchannel;
    /** ext-apps' `App`, connected, for host features (links, messages, display modes). */
    app?: App;
  }
}

/** What the shell keeps of `app_state`'s answer. */
interface ChannelApp {
  title: string;
  html: string;
}

/** A saved app as `open_app` lists it. */
interface SavedAppSummary {
  name: string;
  title: string;
  description: string;
}

const elements = {
  title: byId("title"),
  presence: byId("presence"),
  wall: byId("wall"),
  notice: byId("notice"),
  app: byId("app"),
  popOut: byId("pop-out") as HTMLButtonElement,
};

const app = new App({ name: "backchannel-app-shell", version: "0.1.0" }, {}, { autoResize: true });
let opened = false;
let channel: AppChannel | undefined;
let wallTimer: ReturnType<typeof setTimeout> | undefined;
const popOut = new PopOut(app, elements.popOut, (text) => showNotice(text));

app.onhostcontextchanged = applyHostContext;
app.ontoolresult = (result) => {
  if (result.isError) return showNotice(textOf(result.content) || "open_app failed.");
  const structured = result.structuredContent as { channel_id?: unknown; apps?: unknown } | undefined;
  if (typeof structured?.channel_id === "string") void open(structured.channel_id);
  else if (Array.isArray(structured?.apps)) showSavedApps(structured.apps as SavedAppSummary[]);
};
app.onteardown = async () => {
  channel?.stop();
  return {};
};

await app.connect();
applyHostContext(app.getHostContext() ?? {});

/** Fetches the app of `channelId`, runs it with a connected channel, and tells the agent it is ready. Runs once per iframe. */
async function open(channelId: string): Promise<void> {
  // An app's scripts change the page for good: one app per iframe, as hosts render one per tool call.
  if (opened) return;
  opened = true;
  let state: ChannelApp;
  try {
    const result = await app.callServerTool({ name: "app_state", arguments: { channel_id: channelId } });
    if (result.isError) throw new Error(textOf(result.content));
    const structured = result.structuredContent as { app?: ChannelApp | null; browser_tab?: boolean } | undefined;
    if (!structured?.app) return showNotice("This channel has no app. Ask the agent to open it again with open_app.");
    state = structured.app;
    popOut.channelId = channelId;
    popOut.offer(structured.browser_tab);
  } catch (error) {
    return showNotice(`Could not load the app: ${(error as Error).message}`);
  }
  elements.title.textContent = state.title;
  document.title = state.title;

  const current = new AppChannel(app, { channelId });
  channel = current;
  // The shell's own events leave one after the other, so the agent reads them in the order they happened.
  let shellSends: Promise<unknown> = Promise.resolve();
  const sendInOrder = (event: string, data: unknown) => {
    const sent = shellSends.then(() => current.send(event, data));
    shellSends = sent.catch(() => undefined);
    return sent;
  };
  const reporter = new ErrorReporter(
    (data) => void sendInOrder("app_error", data).catch((error: Error) => console.error("backchannel: could not report an app error", error)),
    showAppError,
  );
  window.backchannel = createBackchannel(current, channelId, {
    onerror: (error) => reporter.reportError(error),
    onwall: showWall,
    onstatechange: showState,
  });
  window.app = app;
  reporter.listen(window);
  await runFragment(elements.app, state.html, reporter);
  current.start();
  await sendInOrder("ready", {}).catch((error: Error) => showNotice(`Could not reach the agent: ${error.message}`));
}

/** `open_app` without an app: the saved apps, as text. */
function showSavedApps(apps: SavedAppSummary[]): void {
  elements.title.textContent = "Saved apps";
  elements.presence.hidden = true;
  if (apps.length === 0) {
    elements.app.replaceChildren(paragraph("No app is saved yet."));
    return;
  }
  const list = document.createElement("ul");
  list.className = "saved-apps";
  for (const saved of apps) {
    const item = document.createElement("li");
    const name = document.createElement("code");
    name.textContent = saved.name;
    const title = document.createElement("strong");
    title.textContent = saved.title;
    item.append(title, " ", name, paragraph(saved.description));
    list.append(item);
  }
  elements.app.replaceChildren(list);
}

function showState(state: ChannelState): void {
  const text: Record<ChannelState, string> = { connecting: "Connecting…", live: "Connected", retrying: "Reconnecting…", stopped: "Stopped" };
  elements.presence.textContent = text[state];
  elements.presence.dataset.state = state;
}

/** Shows the session's wall until it expires (the server stops returning it then too). */
function showWall(wall: ChannelWall | null): void {
  clearTimeout(wallTimer);
  elements.wall.textContent = wall?.text ?? "";
  if (!wall) return;
  // setTimeout takes at most 2^31-1 ms (about 24.8 days); a wall lasts at most 3 days.
  wallTimer = setTimeout(() => (elements.wall.textContent = ""), Math.max(0, Date.parse(wall.until) - Date.now()));
}

function showAppError(error: AppErrorData): void {
  showNotice(`The app hit an error${error.line === null ? "" : ` (line ${error.line})`}: ${error.message}. The agent was told.`);
}

function showNotice(text: string | null): void {
  elements.notice.hidden = text === null;
  elements.notice.textContent = text ?? "";
}

function applyHostContext(context: McpUiHostContext): void {
  if (context.theme) applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
}

function paragraph(text: string): HTMLParagraphElement {
  const element = document.createElement("p");
  element.textContent = text;
  return element;
}

function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`shell.html lacks #${id}`);
  return element;
}
