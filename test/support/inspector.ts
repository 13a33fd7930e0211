/// <reference lib="dom" />
// The functions passed to page.evaluate() run in the browser: they need the DOM types.
/**
 * MCP Inspector's Apps host (`@modelcontextprotocol/inspector` 2.12, `--web`), a real
 * MCP Apps host nobody here wrote, for tests and benchmarks. Headless Chromium shows
 * Inspector's page; the page's Node backend talks MCP to the server.
 *
 *     const inspector = await startInspector();
 *     const server = await startServer(dataDir, "mcp-proxy");   // or "http"
 *     const opened = await inspector.openApp(server, "open_reader", { markdown, channel_id });
 *     await opened.app.locator("#doc p").first().waitFor();      // inside the app
 *     opened.calls                                               // the app's MCP traffic
 *     const next = await opened.openAnother("open_app", { html });  // same page, next app
 *     await opened.answer(next.toolCalls("open_app").at(-1)!)    // what the server returned
 *     await opened.close(); await server.stop(); await inspector.close();
 *
 * - `startServer` runs `backchannel serve` behind `mcp-proxy` (stdio → Streamable HTTP,
 *   as a user bridges a stdio server), or `backchannel serve --http` directly.
 * - `openApp` opens a deep link that connects, switches to the Apps tab, fills the
 *   tool's arguments and presses Open App; it resolves once the app's frame is shown.
 * - `openAnother` opens the next app in the same page, as a user does: Back to Input,
 *   the tool in the list, its arguments as JSON, Open App (the page loads once: that
 *   load is CPU-bound, 8–15 s on 2 cores).
 * - `calls` records every JSON-RPC message the page sends to Inspector's backend
 *   (`POST /api/mcp/send`, which Inspector holds open until the server's answer is
 *   back), with when it left and when it was answered: what the app asked, read from
 *   outside the app. `answer` is what came back: the backend answers the POST with
 *   `{ok: true}` and pushes the JSON-RPC response down the page's event stream
 *   (`GET /api/mcp/events`, read through the DevTools protocol).
 *
 * Facts this relies on (measured on 2.12.0): UI and backend share one port
 * (`CLIENT_PORT`); a deep link needs the API token; the app runs in two nested
 * iframes (the sandbox proxy on its own port, then an opaque-origin srcdoc). Inspector's
 * page relays every message between its backend and the app, and re-renders the whole
 * page for each message and each HTTP exchange its backend logs (40–160 ms a render on
 * two loaded cores; see `longTasks`); with the Monitoring sidebar open it also renders
 * the Messages panel, which grows with every message (answers came 3–7 s late after
 * nine asks) — `openApp` closes it unless asked not to.
 *
 * Every child runs in its own process group and is killed with it, also when the test
 * process dies first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Frame, type FrameLocator, type Page } from "playwright-core";
import { nextWake } from "./claude-code/next-wake.js";
import { freePort } from "../../deploy/free-port.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH, CLI, tempDataDir } from "./helpers.js";

/** The repository's node_modules (this file runs from dist/test/support/). */
const MODULES = fileURLToPath(new URL("../../../node_modules/", import.meta.url));
const INSPECTOR = join(MODULES, "@modelcontextprotocol/inspector/clients/launcher/build/index.js");
const MCP_PROXY = join(MODULES, "mcp-proxy/dist/bin/mcp-proxy.mjs");

/** How Inspector reaches backchannel: `mcp-proxy` in front of `serve` over stdio, or `serve --http` directly. */
export type ServerKind = "mcp-proxy" | "http";

/** A backchannel server Inspector can connect to. */
export interface InspectorServer {
  kind: ServerKind;
  /** Its Streamable HTTP endpoint. */
  url: URL;
  /** Everything it (and mcp-proxy) printed. */
  output(): string;
  /** Stops it (mcp-proxy with its stdio server). */
  stop(): Promise<void>;
}

/** One JSON-RPC message the Inspector page sent to its backend. */
export interface SentMessage {
  /** The JSON-RPC id (rewritten by Inspector: not the app's own), or undefined for a notification. */
  id?: number | string;
  method: string;
  /** `params.name` of a tools/call. */
  tool?: string;
  /** A tools/call's `arguments`; any other message's `params`. */
  params: Record<string, unknown>;
  /** `Date.now()` when the page sent it. */
  sentAt: number;
  /**
   * `Date.now()` when the page reported its request to the backend finished (for a
   * request: the backend holds it until the server's answer is back). Inspector's page
   * reports it from its main thread, so this lags behind the network for as long as the
   * page is busy (see {@link OpenedApp.longTasks}); so do the DevTools protocol's own
   * timestamps of the page's network events.
   */
  answeredAt?: number;
  /** The JSON-RPC response to this request, once the page's event stream brought it. */
  answer?: JsonRpcAnswer;
  /**
   * `Date.now()` when the response reached the page on its event stream (read through
   * the DevTools protocol, so a little after the network): Inspector's backend is done;
   * from here on the time is the page's.
   */
  streamedAt?: number;
}

/** A task that kept the Inspector page's main thread busy 50 ms or more (the Long Tasks API). */
export interface LongTask {
  /** `Date.now()` time it started. */
  startedAt: number;
  /** How long it ran, in ms. */
  duration: number;
}

/** A JSON-RPC response: `result`, or `error`. */
export interface JsonRpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** An app shown in Inspector's Apps tab. */
export interface OpenedApp {
  page: Page;
  /** The app's document (the inner iframe), for locators. */
  app: FrameLocator;
  /** The app's frame, for `evaluate`. */
  frame: Frame;
  /** The tools/call that opened this app (its result: {@link answer}). */
  opening: SentMessage;
  /** Every message the page sent so far, in order (see {@link SentMessage}). */
  readonly calls: readonly SentMessage[];
  /** The tools/call messages of `tool`, in order. */
  toolCalls(tool: string): SentMessage[];
  /** The `notifications/cancelled` the page sent (the app cancelled a call). */
  cancels(): SentMessage[];
  /**
   * The long tasks of Inspector's own page (not the app's frames) since it loaded: while
   * one runs, nothing reaches the app, since Inspector's page relays every message.
   */
  longTasks(): Promise<LongTask[]>;
  /**
   * Resolves with the response to `request` (one of {@link calls}) once it is back.
   * @throws Error when none came within `timeoutMs` (default 30,000).
   */
  answer(request: SentMessage, timeoutMs?: number): Promise<JsonRpcAnswer>;
  /**
   * Opens `tool` with `args` in this page, as a user opens the next app: Back to Input,
   * the tool in the list, its arguments as JSON, Open App. Inspector tears the shown app
   * down first (its pending calls are not cancelled: each ends when the server answers).
   * Resolves with the new app, which shares this page and its {@link calls}.
   * @throws Error when the new app's frame is not shown within the page's timeout.
   */
  openAnother(tool: string, args: Record<string, unknown>): Promise<OpenedApp>;
  /** Opens or closes the Monitoring sidebar (the Messages panel). */
  setSidebar(open: boolean): Promise<void>;
  /** Empties the Messages panel (the sidebar must be open). */
  clearMessages(): Promise<void>;
  /** Closes the page. */
  close(): Promise<void>;
}

/** Options of {@link InspectorHost.openApp}. */
export interface OpenAppOptions {
  /** Leave the Monitoring sidebar open. Default false (open, every call slows as its Messages panel fills). */
  sidebar?: boolean;
  /** How long the page may take to connect and show the app. Default 120,000 ms (the page is CPU-bound). */
  timeoutMs?: number;
}

/** A running Inspector and the browser that shows it. */
export interface InspectorHost {
  /** Opens a page that connects to `server`, calls `tool` with `args` in the Apps tab, and shows its app. */
  openApp(server: InspectorServer, tool: string, args: Record<string, unknown>, options?: OpenAppOptions): Promise<OpenedApp>;
  /** What Inspector printed, for failure messages. */
  output(): string;
  /** Errors thrown in any of its pages so far. */
  pageErrors(): string[];
  /** Closes the browser and stops Inspector. */
  close(): Promise<void>;
}

/**
 * Starts `backchannel serve` on `dataDir`, behind mcp-proxy (`"mcp-proxy"`) or over
 * Streamable HTTP itself (`"http"`). Resolves once it listens.
 * @throws Error with its output when it exits or does not listen within 30 s.
 */
export async function startServer(dataDir: string, kind: ServerKind): Promise<InspectorServer> {
  const env = { BACKCHANNEL_HOME: dataDir };
  if (kind === "http") {
    const child = startChild("backchannel serve --http", process.execPath, [CLI, "serve", "--http", "--port", "0"], env);
    const [, url] = await child.waitFor(/MCP server at (http:\/\/\S+\/mcp)/);
    return { kind, url: new URL(url!), output: child.output, stop: child.stop };
  }
  const port = await freePort();
  // mcp-proxy declares no capabilities of its own to the server (not Inspector's MCP Apps extension): --apps says it is an apps host's.
  const args = [MCP_PROXY, "--port", String(port), "--host", "127.0.0.1", "--", process.execPath, CLI, "serve", "--apps"];
  const child = startChild("mcp-proxy", process.execPath, args, env);
  await child.waitFor(/starting server on port/);
  return { kind, url: new URL(`http://127.0.0.1:${port}/mcp`), output: child.output, stop: child.stop };
}

/** What {@link inspectorForSuite} starts; its fields are set once the suite's `before` ran. */
export interface InspectorRig {
  inspector: InspectorHost;
  server: InspectorServer;
  /** The server's data directory, made for the suite. */
  dataDir: string;
}

/**
 * Starts Inspector and a `kind` server on a fresh data directory before the calling
 * suite's tests; after them stops both, calls `stopAlso(dataDir)` (for what the tests
 * left running on that folder) and removes the folder.
 * @returns the rig, filled in by the time the suite's first test runs.
 */
export function inspectorForSuite(kind: ServerKind, stopAlso?: (dataDir: string) => void): InspectorRig {
  const rig = {} as InspectorRig;
  let cleanup: (() => Promise<void>) | undefined;
  before(async () => {
    ({ dir: rig.dataDir, cleanup } = await tempDataDir());
    [rig.inspector, rig.server] = await Promise.all([startInspector(), startServer(rig.dataDir, kind)]);
  });
  after(async () => {
    await rig.inspector?.close();
    await rig.server?.stop();
    if (rig.dataDir) stopAlso?.(rig.dataDir);
    await cleanup?.();
  });
  return rig;
}

/**
 * Starts Inspector (`--web`, its state in a temporary HOME) and headless Chromium.
 * @throws Error with Inspector's output when it does not come up within 30 s.
 */
export async function startInspector(): Promise<InspectorHost> {
  const home = await mkdtemp(join(tmpdir(), "backchannel-inspector-"));
  const token = randomBytes(24).toString("hex");
  const [clientPort, sandboxPort, appOriginPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const inspector = startChild("inspector", process.execPath, [INSPECTOR, "--web"], {
    CLIENT_PORT: String(clientPort),
    MCP_SANDBOX_PORT: String(sandboxPort),
    MCP_APP_ORIGIN_PORT: String(appOriginPort),
    // A fixed token: the deep link's autoConnect and autoOpen must equal it.
    MCP_INSPECTOR_API_TOKEN: token,
    MCP_AUTO_OPEN_ENABLED: "false",
    MCP_INSPECTOR_SECRET_STORE: "memory",
    HOME: home,
  });
  let browser: Browser | undefined;
  try {
    const [, uiUrl] = await inspector.waitFor(/is up and running at:\s+(http:\/\/\S+)/);
    const [, sandboxUrl] = await inspector.waitFor(/Sandbox \(MCP Apps\): (http:\/\/\S+)/);
    const origin = new URL(uiUrl!).origin;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    const errors: string[] = [];
    const launched = browser;
    return {
      output: inspector.output,
      pageErrors: () => [...errors],
      openApp: (server, tool, args, options = {}) =>
        openApp(launched, { origin, token, sandboxUrl: sandboxUrl!, errors }, server, tool, args, options),
      async close() {
        await launched.close().catch(() => undefined);
        await inspector.stop();
        await rm(home, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await browser?.close().catch(() => undefined);
    await inspector.stop();
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

/** What {@link openApp} needs of the running Inspector. */
interface Session {
  origin: string;
  token: string;
  sandboxUrl: string;
  errors: string[];
}

async function openApp(
  browser: Browser,
  session: Session,
  server: InspectorServer,
  tool: string,
  args: Record<string, unknown>,
  options: OpenAppOptions,
): Promise<OpenedApp> {
  const timeout = options.timeoutMs ?? 120_000;
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(timeout);
  page.on("pageerror", (error) => session.errors.push(error.message));
  const recorder = await recordCalls(page);
  await page.addInitScript(observeLongTasks);
  const link = new URL("/", session.origin);
  link.search = new URLSearchParams({
    serverUrl: server.url.href,
    transport: "http",
    autoConnect: session.token,
    openApp: tool,
    // Inspector decodes appArgs with atob(), as Latin-1: JSON kept to ASCII (\u escapes) reads back the same.
    appArgs: Buffer.from(asciiJson(args)).toString("base64url"),
    autoOpen: session.token,
  }).toString();
  const opening = recorder.nextToolCall(tool, timeout);
  await page.goto(link.href);
  const setSidebar = async (open: boolean) => {
    // One button toggles it; its name says what a click does.
    await page.getByRole("button", { name: /^(Open|Close) monitoring sidebar$/ }).waitFor();
    const toggle = page.getByRole("button", { name: open ? "Open monitoring sidebar" : "Close monitoring sidebar" });
    if ((await toggle.count()) > 0) await toggle.click();
    await page.getByRole("button", { name: open ? "Close monitoring sidebar" : "Open monitoring sidebar" }).waitFor();
  };
  if (!options.sidebar) await setSidebar(false);
  await page.locator('[data-testid="connection-status"][data-status="connected"]').waitFor();
  return shownApp(page, session, recorder, setSidebar, await opening, undefined, timeout);
}

/** The app the page shows once it is ready: a frame other than `previous`, inside the sandbox proxy's frame. */
async function shownApp(
  page: Page,
  session: Session,
  recorder: CallRecorder,
  setSidebar: (open: boolean) => Promise<void>,
  opening: SentMessage,
  previous: Frame | undefined,
  timeout: number,
): Promise<OpenedApp> {
  await page.locator('[data-app-status="ready"]').waitFor();
  const outer = `iframe[src="${session.sandboxUrl}"]`;
  await page.locator(outer).waitFor();
  const frame = await waitForAppFrame(page, session.sandboxUrl, previous, timeout);
  const { calls } = recorder;
  const opened: OpenedApp = {
    page,
    app: page.frameLocator(outer).frameLocator("iframe"),
    frame,
    opening,
    calls,
    toolCalls: (name) => calls.filter((call) => call.method === "tools/call" && call.tool === name),
    cancels: () => calls.filter((call) => call.method === "notifications/cancelled"),
    longTasks: () => page.evaluate(() => (window as LongTaskWindow).__backchannelLongTasks ?? []),
    answer: (request, timeoutMs) => recorder.answer(request, timeoutMs),
    async openAnother(tool, args) {
      await page.getByRole("button", { name: "Back to Input" }).click();
      await page
        .locator("button", { hasText: toolTitle(calls, tool) })
        .first()
        .click();
      const form = page.locator('[data-testid="apps-form"]');
      const asJson = form.getByRole("switch", { name: "Edit as JSON" });
      // The switch keeps its state from one app to the next; form fields would drop newlines.
      if (!(await asJson.isChecked())) await asJson.click({ force: true });
      await form
        .locator(".ace_editor")
        .evaluate(
          (editor, json) => (editor as unknown as { env: { editor: { setValue(text: string, cursor: number): void } } }).env.editor.setValue(json, 1),
          JSON.stringify(args, null, 2),
        );
      const next = recorder.nextToolCall(tool, timeout);
      await page.locator('[data-testid="open-app"]:enabled').click();
      return shownApp(page, session, recorder, setSidebar, await next, frame, timeout);
    },
    setSidebar,
    async clearMessages() {
      await page.getByRole("button", { name: "Clear", exact: true }).click();
    },
    close: () => page.close(),
  };
  return opened;
}

/** Where {@link observeLongTasks} keeps what it saw. */
type LongTaskWindow = Window & { __backchannelLongTasks?: LongTask[] };

/** Runs in every frame before its scripts: records the long tasks of the top frame (Inspector's page). */
function observeLongTasks(): void {
  if (window !== window.top) return;
  const tasks: LongTask[] = [];
  (window as LongTaskWindow).__backchannelLongTasks = tasks;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) tasks.push({ startedAt: performance.timeOrigin + entry.startTime, duration: entry.duration });
  }).observe({ type: "longtask", buffered: true });
}

/** The title Inspector's list shows for `tool` (its `title`, else its name), from the page's own tools/list. */
function toolTitle(calls: readonly SentMessage[], tool: string): string {
  const listed = calls.find((call) => call.method === "tools/list" && call.answer?.result)?.answer?.result?.tools as
    | { name: string; title?: string }[]
    | undefined;
  const found = listed?.find((candidate) => candidate.name === tool);
  if (!found) throw new Error(`the page listed no tool ${tool}`);
  return found.title ?? found.name;
}

/** `value` as JSON with every non-ASCII character escaped (\uXXXX). */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The app's frame: the one inside the sandbox proxy's frame (other than `previous`, the app shown before). */
async function waitForAppFrame(page: Page, sandboxUrl: string, previous: Frame | undefined, timeoutMs: number): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frame = page
      .frames()
      .find((candidate) => candidate !== previous && !candidate.isDetached() && candidate.parentFrame()?.url() === sandboxUrl);
    if (frame) return frame;
    if (Date.now() > deadline) throw new Error("Inspector showed no app frame inside its sandbox frame");
    await page.waitForEvent("frameattached", { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
  }
}

/** The messages a page sent, and the answers its event stream brought back. */
interface CallRecorder {
  calls: SentMessage[];
  /** Resolves with the answer to `request` once it is back; rejects after `timeoutMs` (default 30,000). */
  answer(request: SentMessage, timeoutMs?: number): Promise<JsonRpcAnswer>;
  /** Resolves with the next tools/call of `tool` the page sends from now on; rejects when none within `timeoutMs`. */
  nextToolCall(tool: string, timeoutMs: number): Promise<SentMessage>;
}

/**
 * Records every JSON-RPC message `page` sends to Inspector's backend, and the response
 * to each request. The backend pushes responses down a streamed `fetch` of
 * `/api/mcp/events` (server-sent events: `data: {"type":"message","data":<JSON-RPC>}`),
 * which Playwright cannot read while it is open: the DevTools protocol streams it
 * (`Network.streamResourceContent`). Call before the page loads.
 */
async function recordCalls(page: Page): Promise<CallRecorder> {
  const calls: SentMessage[] = [];
  const byRequest = new WeakMap<object, SentMessage>();
  /** Responses by JSON-RPC id, kept until their request is recorded (both arrive through the DevTools protocol, in no promised order). */
  const unclaimed = new Map<number | string, { answer: JsonRpcAnswer; at: number }>();
  const waiters = new Set<() => void>();
  const expected = new Set<{ tool: string; resolve(message: SentMessage): void }>();
  const claim = (message: SentMessage) => {
    if (message.id === undefined || message.answer) return;
    const streamed = unclaimed.get(message.id);
    if (!streamed) return;
    unclaimed.delete(message.id);
    message.answer = streamed.answer;
    message.streamedAt = streamed.at;
  };
  page.on("request", (request) => {
    if (request.method() !== "POST" || !request.url().endsWith("/api/mcp/send")) return;
    const message = parseSent(request.postData());
    if (!message) return;
    byRequest.set(request, message);
    calls.push(message);
    claim(message);
    for (const expectation of expected) {
      if (message.method !== "tools/call" || message.tool !== expectation.tool) continue;
      expected.delete(expectation);
      expectation.resolve(message);
    }
  });
  page.on("requestfinished", (request) => {
    const message = byRequest.get(request);
    if (message) message.answeredAt = Date.now();
  });

  const devtools = await page.context().newCDPSession(page);
  const streams = new Map<string, EventStreamParser>();
  const onResponse = (message: StreamedMessage) => {
    if (message.id === undefined || message.method !== undefined) return;
    const answer: JsonRpcAnswer = {
      ...(message.result !== undefined ? { result: message.result as Record<string, unknown> } : {}),
      ...(message.error !== undefined ? { error: message.error as JsonRpcAnswer["error"] } : {}),
    };
    unclaimed.set(message.id, { answer, at: Date.now() });
    // The newest request with this id (ids are the page client's own, one counter per connection).
    const request = calls.findLast((call) => call.id === message.id && !call.answer);
    if (request) claim(request);
    for (const wake of waiters) wake();
  };
  devtools.on("Network.responseReceived", (event) => {
    if (!new URL(event.response.url).pathname.endsWith("/api/mcp/events")) return;
    const parser = new EventStreamParser(onResponse);
    streams.set(event.requestId, parser);
    devtools
      .send("Network.streamResourceContent", { requestId: event.requestId })
      .then(({ bufferedData }) => parser.push(Buffer.from(bufferedData, "base64").toString()))
      .catch(() => undefined); // The stream ended first (the page closed or reconnected).
  });
  devtools.on("Network.dataReceived", (event) => {
    if (event.data) streams.get(event.requestId)?.push(Buffer.from(event.data, "base64").toString());
  });
  devtools.on("Network.loadingFinished", (event) => void streams.delete(event.requestId));
  await devtools.send("Network.enable");

  return {
    calls,
    nextToolCall(tool, timeoutMs) {
      const next = new Promise<SentMessage>((resolve, reject) => {
        const expectation = {
          tool,
          resolve(message: SentMessage) {
            clearTimeout(timer);
            resolve(message);
          },
        };
        const timer = setTimeout(() => {
          expected.delete(expectation);
          reject(new Error(`the page called no ${tool} within ${timeoutMs} ms`));
        }, timeoutMs);
        expected.add(expectation);
      });
      // Awaited only after the action that sends it: until then a rejection is not unhandled.
      next.catch(() => undefined);
      return next;
    },
    async answer(request, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (request.answer) return request.answer;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no answer to ${request.method} ${request.tool ?? ""} (id ${request.id}) within ${timeoutMs} ms`);
        await nextWake(waiters, left);
      }
    },
  };
}

/** A JSON-RPC message as the page's event stream brings it, unchecked: a response has an `id` and no `method`. */
interface StreamedMessage {
  id?: number | string;
  method?: unknown;
  result?: unknown;
  error?: unknown;
}

/** Splits a server-sent event stream into events and hands on the JSON-RPC message of each `message` event. */
class EventStreamParser {
  private buffered = "";

  constructor(private readonly onMessage: (message: StreamedMessage) => void) {}

  /** Feeds the next chunk of the stream (chunks may split an event anywhere). Inspector ends its lines with LF. */
  push(chunk: string): void {
    this.buffered += chunk;
    for (let end = this.buffered.indexOf("\n\n"); end !== -1; end = this.buffered.indexOf("\n\n")) {
      const block = this.buffered.slice(0, end);
      this.buffered = this.buffered.slice(end + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
        .join("\n");
      if (data === "") continue;
      try {
        const event = JSON.parse(data) as { type?: string; data?: unknown };
        if (event.type === "message" && typeof event.data === "object" && event.data !== null) this.onMessage(event.data);
      } catch {
        // Not JSON: no message of ours.
      }
    }
  }
}

/** The JSON-RPC message in the body of a `/api/mcp/send` request, or undefined when there is none. */
function parseSent(body: string | null): SentMessage | undefined {
  try {
    const { message } = JSON.parse(body ?? "") as { message?: { id?: number | string; method?: unknown; params?: Record<string, unknown> } };
    if (!message || typeof message.method !== "string") return undefined;
    const params = message.params ?? {};
    return {
      ...(message.id !== undefined ? { id: message.id } : {}),
      method: message.method,
      ...(typeof params.name === "string" ? { tool: params.name } : {}),
      params: (params.arguments as Record<string, unknown> | undefined) ?? params,
      sentAt: Date.now(),
    };
  } catch {
    return undefined;
  }
}

/** A child process in its own process group, its output collected. */
export interface Child {
  process: ChildProcess;
  output(): string;
  /** Resolves with the match once the output (stdout and stderr) matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM to the group, SIGKILL after 3 s; resolves when it exited. */
  stop(): Promise<void>;
}

/** Groups still running, killed if this process exits first (a crashed run must not leave Inspector holding its ports). */
const running = new Set<number>();
process.on("exit", () => {
  for (const pid of running) killGroup(pid, "SIGKILL");
});

/** Starts `command` in a process group of its own (see {@link Child}), `env` added to this process's; `name` is for errors. */
export function startChild(name: string, command: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const pid = child.pid!;
  running.add(pid);
  let output = "";
  const waiters = new Set<() => void>();
  const feed = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of waiters) wake();
  };
  child.stdout!.on("data", feed);
  child.stderr!.on("data", feed);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running.delete(pid);
      for (const wake of waiters) wake();
      resolve();
    }),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    process: child,
    output: () => output,
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = output.match(pattern);
        if (match) return match;
        if (gone()) throw new Error(`${name} exited before printing ${pattern}:\n${output}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${name} printed no ${pattern} within ${timeoutMs} ms:\n${output}`);
        await nextWake(waiters, left);
      }
    },
    async stop() {
      if (gone()) return;
      killGroup(pid, "SIGTERM");
      const timer = setTimeout(() => killGroup(pid, "SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
