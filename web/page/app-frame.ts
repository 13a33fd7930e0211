/**
 * Rendering an MCP App in the browser host's page, as Claude or VS Code do in a chat:
 *
 * - the app's HTML comes from the `ui://` resource its tool names, read through the
 *   app's MCP session;
 * - it runs in a frame loaded from the host (`frame`, ./frame.ts), sandboxed to scripts
 *   only (an opaque origin that cannot reach this page or its cookies), under the
 *   policy hosts give apps (no network at all), which the host sends with the frame;
 * - ext-apps' `AppBridge` connects it to the app's session, forwards its tool calls, and
 *   sends the tool's input and result and the host context (theme, styles, the
 *   container's size, the display modes). Like Claude Desktop and VS Code, the host puts
 *   an app's `ui/message` into the chat's input box for the person to send (where the
 *   page has a chat), and shows the reader full screen when asked.
 */
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import {
  AppBridge,
  type McpUiDisplayMode,
  type McpUiHostContext,
  type McpUiHostCapabilities,
  type McpUiStyles,
  type McpUiTheme,
  PostMessageTransport,
} from "@modelcontextprotocol/ext-apps/app-bridge";

/** The policy hosts give an app that declares no `_meta.ui.csp` (docs/ARCHITECTURE.md, "Hosts"): no network at all. Also sent by the host with the frame. */
const APP_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'";

/** What no inline app is made smaller than, however little room the window has (px). */
const MIN_INLINE_HEIGHT = 360;

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

/** One app to render: the session its calls go through, its resource, and the tool call that opened it. */
export interface AppCall {
  client: Client;
  uri: string;
  input: Record<string, unknown>;
  result: CallToolResult;
}

/** What the page does for its apps. */
export interface AppFramesOptions {
  /** The host's name, as apps see it (`hostInfo`). */
  hostName: string;
  /** Where an app's `ui/message` goes (the chat's input box); none: the host has no chat, and says so. */
  onmessage?: (text: string) => void;
  /** The room (px) the page keeps in view below the main app, such as a chat box (default none). */
  roomBelow?: () => number;
}

/** The apps rendered in the page: their bridges, and the host context they share. */
export class AppFrames {
  theme: McpUiTheme = "light";
  private displayMode: McpUiDisplayMode = "inline";
  /** Every app rendered in the page, to hand each a change of the host context; true for the main one (the reader's place). */
  private readonly bridges = new Map<AppBridge, { main: boolean; container: HTMLElement }>();
  /** The app started ahead of its tool call ({@link preload}). */
  private preloaded: { container: HTMLElement; uri: string; main: boolean; app: Promise<StartedApp> } | undefined;

  constructor(private readonly options: AppFramesOptions) {
    addEventListener("resize", () => this.refresh());
  }

  /**
   * Renders `call`'s app in a fresh frame in `container`, replacing `previous`, as a host
   * does when a conversation is re-opened: read the resource while the frame loads,
   * connect the bridge, then hand the app the tool's input and result once it has
   * initialized. The app {@link preload}ed in `container` for the same resource is used
   * as it stands. `main`: the page's main app (the reader), which may go full screen.
   */
  async mount(call: AppCall, container: HTMLElement, title: string, previous?: AppBridge, main = false): Promise<AppBridge> {
    if (previous) await this.unmount(previous);
    const preloaded = this.preloaded;
    this.preloaded = undefined;
    const reuse = preloaded?.container === container && preloaded.uri === call.uri && preloaded.main === main;
    if (preloaded && !reuse)
      void preloaded.app.then(
        (app) => this.unmount(app.bridge),
        () => undefined,
      );
    const app = await (reuse ? preloaded.app : this.start(call.client, call.uri, container, main));
    app.iframe.title = title;
    app.open(call);
    return app.bridge;
  }

  /**
   * Starts, in `container`, the app of `uri` before the page has the tool call to hand it
   * (a link names a channel: its app is known before its state is read), so that the
   * app's resource, frame and script load while the page makes its other calls; the
   * next {@link mount} there of the same resource hands it the call.
   */
  preload(client: Client, uri: string, container: HTMLElement, main = false): void {
    const app = this.start(client, uri, container, main);
    // A failure shows when the page mounts it.
    app.catch(() => undefined);
    this.preloaded = { container, uri, main, app };
  }

  /** Closes `bridge`'s app: it gets no more host context. */
  private async unmount(bridge: AppBridge): Promise<void> {
    this.bridges.delete(bridge);
    await bridge.close();
  }

  /** Reads `uri` while a fresh frame loads in `container`, connects a bridge to it, and posts the app's HTML. */
  private async start(client: Client, uri: string, container: HTMLElement, main: boolean): Promise<StartedApp> {
    if (main) this.setDisplayMode("inline", container);
    const iframe = document.createElement("iframe");
    // Scripts only: an opaque origin that cannot reach this page, like hosts' sandboxes.
    iframe.sandbox.add("allow-scripts");
    const ready = frameReady(iframe);
    container.replaceChildren(iframe);
    iframe.src = new URL("frame", location.href).href;
    const [{ contents }, frame] = await Promise.all([client.readResource({ uri }), ready]);
    const html = contents[0] && "text" in contents[0] ? contents[0].text : "";

    const capabilities: McpUiHostCapabilities = {
      openLinks: {},
      serverTools: {},
      logging: {},
      ...(this.options.onmessage ? { message: { text: {} } } : {}),
    };
    const bridge = new AppBridge(client, { name: this.options.hostName, version: "0.1.0" }, capabilities, {
      hostContext: this.hostContext(main, container),
    });
    bridge.onopenlink = async ({ url }) => {
      window.open(url, "_blank", "noopener,noreferrer");
      return {};
    };
    bridge.onsizechange = ({ height }) => {
      // Full screen, the window sets the height (the style sheet); inline, the app does.
      if (height !== undefined) iframe.style.height = main && this.displayMode === "fullscreen" ? "" : `${Math.ceil(height)}px`;
    };
    const onmessage = this.options.onmessage;
    if (onmessage)
      bridge.onmessage = async ({ content }) => {
        onmessage(content.map((block) => (block.type === "text" ? block.text : "")).join("\n"));
        return {};
      };
    if (main)
      bridge.onrequestdisplaymode = async ({ mode }) => {
        this.setDisplayMode(mode === "fullscreen" ? "fullscreen" : "inline", container);
        bridge.setHostContext(this.hostContext(true, container));
        return { mode: this.displayMode };
      };
    // The tool call goes to the app once both are there: the app initialized, the page's call given.
    let initialized = false;
    let call: AppCall | undefined;
    const handOver = () => {
      if (!initialized || !call) return;
      void bridge.sendToolInput({ arguments: call.input });
      void bridge.sendToolResult(call.result);
    };
    bridge.oninitialized = () => {
      initialized = true;
      handOver();
    };
    // Listen before the app's document is in, so that its first message is not missed.
    await bridge.connect(new PostMessageTransport(frame, frame));
    this.bridges.set(bridge, { main, container });
    frame.postMessage(
      { type: "backchannel-app", html: html.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${APP_CSP}">`) },
      "*",
    );
    return {
      iframe,
      bridge,
      open: (opened) => {
        call = opened;
        handOver();
      },
    };
  }

  /** Hands every app the current host context (after a change of theme or window). */
  refresh(): void {
    for (const [bridge, { main, container }] of this.bridges) bridge.setHostContext(this.hostContext(main, container));
  }

  private setDisplayMode(mode: McpUiDisplayMode, container: HTMLElement): void {
    this.displayMode = mode;
    container.classList.toggle("fullscreen", mode === "fullscreen");
    const iframe = container.querySelector("iframe");
    if (iframe && mode === "fullscreen") iframe.style.height = "";
  }

  /** The room (px) the page takes in the window's height around `container`: above it (from the page's top), below it as the page asks, and the page's bottom padding. */
  private roomAround(container: HTMLElement): number {
    const above = container.getBoundingClientRect().top + window.scrollY;
    const padding = Number.parseFloat(getComputedStyle(container.closest("main") ?? document.body).paddingBottom) || 0;
    return above + (this.options.roomBelow?.() ?? 0) + padding;
  }

  /** The host context of the main app (its container and display modes too) or of another one. */
  private hostContext(main: boolean, container: HTMLElement): McpUiHostContext {
    const styles = { variables: PALETTES[this.theme] as McpUiStyles };
    // Variables a host leaves out are simply absent; the type lists every key as string | undefined.
    if (!main) return { theme: this.theme, styles, displayMode: "inline", platform: "web", locale: navigator.language };
    const fullscreen = this.displayMode === "fullscreen";
    return {
      theme: this.theme,
      styles,
      displayMode: this.displayMode,
      availableDisplayModes: ["inline", "fullscreen"],
      // Full screen, the app is the window; inline, it may take the window's height below
      // where it starts, but the room the page keeps below it (and the page's bottom padding).
      containerDimensions: fullscreen
        ? { height: window.innerHeight, width: window.innerWidth }
        : {
            maxHeight: Math.max(MIN_INLINE_HEIGHT, window.innerHeight - this.roomAround(container)),
            maxWidth: container.clientWidth || window.innerWidth,
          },
      platform: "web",
      locale: navigator.language,
    };
  }
}

/** An app started in its frame, waiting for its tool call. */
interface StartedApp {
  iframe: HTMLIFrameElement;
  bridge: AppBridge;
  /** Hands the app `call`'s input and result, once it has initialized. Once. */
  open(call: AppCall): void;
}

/** Resolves with the frame's window once ./frame.ts says it is ready for the app's HTML. */
function frameReady(iframe: HTMLIFrameElement): Promise<Window> {
  return new Promise((resolve) => {
    const onready = (event: MessageEvent) => {
      if (event.source === null || event.source !== iframe.contentWindow) return;
      if ((event.data as { type?: unknown } | null)?.type !== "backchannel-frame-ready") return;
      removeEventListener("message", onready);
      resolve(event.source as Window);
    };
    addEventListener("message", onready);
  });
}
