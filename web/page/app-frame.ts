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
import type { CallToolResult, Client, ReadResourceResult } from "@modelcontextprotocol/client";
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
  /** What the page already asked for the app, used once: its resource (`uri`) as read, and a call of the app's made as the app will make it first. */
  early?: { resource?: Promise<ReadResourceResult>; toolCall?: { name: string; arguments: Record<string, unknown>; result: CallToolResult } };
}

/** An app started ahead of its tool call ({@link AppFrames.mountAhead}). */
export interface AheadApp {
  /** Its resource, and the session its calls go through. */
  uri: string;
  client: Client;
  /** Shows it, handing it `call` (one of its resource's), titled `title`; resolves with its bridge. */
  show(call: AppCall, title: string): Promise<AppBridge>;
  /** Drops it: its bridge closed (the frame is replaced by the next app's). */
  cancel(): Promise<void>;
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
  /** A frame loading ahead of its app ({@link preload}). */
  private preloaded: LoadingFrame | undefined;

  constructor(private readonly options: AppFramesOptions) {
    addEventListener("resize", () => this.refresh());
  }

  /**
   * Renders `call`'s app in a fresh frame in `container`, replacing `previous`, as a host
   * does when a conversation is re-opened: read the resource while the frame loads (or
   * take the one preloaded there), connect the bridge, then hand the app the tool's
   * input and result once it has initialized. `main`: the page's main app (the reader),
   * which may go full screen.
   */
  async mount(call: AppCall, container: HTMLElement, title: string, previous?: AppBridge, main = false): Promise<AppBridge> {
    if (previous) {
      this.bridges.delete(previous);
      await previous.close();
    }
    const early = call.early;
    call.early = undefined;
    const resource = () => early?.resource ?? readAppResource(call.client, call.uri);
    const { bridge } = await this.start(call.client, call.uri, resource, container, title, main, call);
    if (early?.toolCall) answerOnce(bridge, early.toolCall);
    return bridge;
  }

  /**
   * Starts the app of resource `uri` in `container` before the page knows the tool call
   * it shows, when it is likely (the reader, for a link): in the frame preloaded there
   * when that one already holds it ({@link preload}), else in a fresh one, its resource
   * read first. Its script loads while the page reads the channel. The frame
   * stays hidden and the app gets no tool input or result until {@link AheadApp.show}
   * hands it the call, which must be one of `uri`'s; {@link AheadApp.cancel} drops it.
   */
  mountAhead(client: Client, uri: string, container: HTMLElement, main = false): AheadApp {
    let deliver!: (call: AppCall) => void;
    const shown = new Promise<AppCall>((resolve) => (deliver = resolve));
    const started = this.start(client, uri, () => readAppResource(client, uri), container, "", main, shown, true);
    return {
      uri,
      client,
      show: async (call, title) => {
        const { bridge, iframe } = await started;
        const early = call.early;
        call.early = undefined;
        if (early?.toolCall) answerOnce(bridge, early.toolCall);
        iframe.title = title;
        // Shown before the app has said its height (it may still be starting), the frame
        // takes the most the app may take inline, as the reader does with a document to
        // show: the page's content around it does not move when the app's height comes.
        if (!iframe.style.height && this.displayMode === "inline") iframe.style.height = `${this.inlineMaxHeight(container)}px`;
        iframe.style.visibility = "";
        deliver(call);
        return bridge;
      },
      cancel: async () => {
        const { bridge } = await started;
        this.bridges.delete(bridge);
        await bridge.close();
      },
    };
  }

  /**
   * The common part of {@link mount} and {@link mountAhead}: a frame in `container`
   * (the one preloaded there, else a new one), the bridge connected to it over `client`,
   * the app's HTML (`resource`, the app `uri`'s) posted in unless the frame already holds
   * the app; `call`'s input and result go to the app once it has
   * initialized and `call` has come. `hidden`: the frame is hidden before the app is in.
   */
  private async start(
    client: Client,
    uri: string,
    resource: () => Promise<ReadResourceResult>,
    container: HTMLElement,
    title: string,
    main: boolean,
    call: AppCall | Promise<AppCall>,
    hidden = false,
  ): Promise<{ bridge: AppBridge; iframe: HTMLIFrameElement }> {
    if (main) this.setDisplayMode("inline", container);
    const loading = this.takePreloaded(container, uri) ?? loadFrame(container);
    const iframe = loading.iframe;
    iframe.title = title;
    if (hidden) iframe.style.visibility = "hidden";
    const held = loading.held;
    const [html, frame] = await Promise.all([held ? "" : resource().then(htmlOf), loading.ready]);

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
    bridge.oninitialized = () => {
      void Promise.resolve(call).then(({ input, result }) => {
        void bridge.sendToolInput({ arguments: input });
        void bridge.sendToolResult(result);
      });
    };
    if (held) {
      // The app is in already and may have posted (its `ui/initialize`): the page's first
      // script kept that. It stops keeping in the task in which the bridge starts listening
      // (no message can come in between), then hands the bridge what it kept, in order.
      held.stop();
      await bridge.connect(new PostMessageTransport(frame, frame));
      for (const { data, origin } of held.messages) dispatchEvent(new MessageEvent("message", { data, origin, source: frame }));
    } else {
      // Listen before the app's document is in, so that its first message is not missed.
      await bridge.connect(new PostMessageTransport(frame, frame));
      frame.postMessage(
        { type: "backchannel-app", html: html.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${APP_CSP}">`) },
        "*",
      );
    }
    this.bridges.set(bridge, { main, container });
    return { bridge, iframe };
  }

  /**
   * Starts loading, in `container`, the frame the next {@link mount} there will use, before
   * the page knows which app it holds: the frame's load then overlaps the page's calls.
   * When the page's first script started app `aheadApp`'s frame there already
   * (`window.backchannelAhead`), that frame is the one, holding that app.
   */
  preload(container: HTMLElement, aheadApp?: string): void {
    const ahead = window.backchannelAhead;
    window.backchannelAhead = undefined;
    if (ahead && aheadApp !== undefined && ahead.iframe.parentElement === container && ahead.iframe.contentWindow) {
      this.preloaded = { iframe: ahead.iframe, ready: Promise.resolve(ahead.iframe.contentWindow), held: { uri: aheadApp, ...ahead } };
      return;
    }
    ahead?.stop();
    this.preloaded = loadFrame(container);
  }

  /** The frame preloaded in `container`, if any, once, unless it holds an app other than `uri`; a frame preloaded elsewhere is dropped. */
  private takePreloaded(container: HTMLElement, uri: string): LoadingFrame | undefined {
    const preloaded = this.preloaded;
    this.preloaded = undefined;
    if (!preloaded || preloaded.iframe.parentElement !== container) return undefined;
    if (preloaded.held && preloaded.held.uri !== uri) {
      preloaded.held.stop();
      return undefined;
    }
    return preloaded;
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

  /** The most height (px) the main app in `container` may take inline: the window's height below where it starts, but the room the page keeps. */
  private inlineMaxHeight(container: HTMLElement): number {
    return Math.max(MIN_INLINE_HEIGHT, window.innerHeight - this.roomAround(container));
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
      // Full screen, the app is the window; inline, it may take what `inlineMaxHeight` says.
      containerDimensions: fullscreen
        ? { height: window.innerHeight, width: window.innerWidth }
        : {
            maxHeight: this.inlineMaxHeight(container),
            maxWidth: container.clientWidth || window.innerWidth,
          },
      platform: "web",
      locale: navigator.language,
    };
  }
}

/** Reads an app's `ui://` resource through `client`, as a request of its own (the SDK's `readResource` waits on its cache's other reads). */
export function readAppResource(client: Client, uri: string): Promise<ReadResourceResult> {
  return client.request({ method: "resources/read", params: { uri } });
}

/**
 * What the page's first script leaves when it starts an app's frame ahead
 * (web/page-files.ts): the frame, what the app posted before anything listened, and
 * how to stop keeping that.
 */
interface AheadFrame {
  iframe: HTMLIFrameElement;
  messages: MessageEvent[];
  stop(): void;
}

declare global {
  interface Window {
    backchannelAhead?: AheadFrame;
  }
}

/** A frame an app will run in, and its window once ./frame.ts is ready for the app's HTML; `held`: it was loaded with app `uri` in it. */
interface LoadingFrame {
  iframe: HTMLIFrameElement;
  ready: Promise<Window>;
  held?: AheadFrame & { uri: string };
}

/** The HTML of an app's resource as `resources/read` answers it ("" when it has none). */
function htmlOf({ contents }: ReadResourceResult): string {
  return contents[0] && "text" in contents[0] ? contents[0].text : "";
}

/** Puts a fresh app frame in `container` in place of what it held, loading from the host. */
function loadFrame(container: HTMLElement): LoadingFrame {
  const iframe = document.createElement("iframe");
  // Scripts only: an opaque origin that cannot reach this page, like hosts' sandboxes.
  iframe.sandbox.add("allow-scripts");
  const ready = frameReady(iframe);
  container.replaceChildren(iframe);
  iframe.src = new URL("frame", location.href).href;
  return { iframe, ready };
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

/**
 * Answers the app's first call of `made.name`, when its arguments are `made.arguments`,
 * with `made.result`, a call the page made for it moments before (its state, read while
 * the app loaded): the app sees what its own call would have, had it come that much
 * sooner. Every other call goes on to the server.
 */
function answerOnce(bridge: AppBridge, made: NonNullable<NonNullable<AppCall["early"]>["toolCall"]>): void {
  const forward = bridge.oncalltool;
  if (!forward) return;
  let pending: typeof made | undefined = made;
  const key = JSON.stringify(made.arguments);
  // Unset first: ext-apps warns in the console when a handler replaces another.
  bridge.oncalltool = undefined;
  bridge.oncalltool = async (params, extra) => {
    const answer = pending;
    if (answer && params.name === answer.name && JSON.stringify(params.arguments ?? {}) === key) {
      pending = undefined;
      return answer.result;
    }
    if (answer && params.name === answer.name) pending = undefined;
    return forward(params, extra);
  };
}
