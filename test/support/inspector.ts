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
 *     await opened.close(); await server.stop(); await inspector.close();
 *
 * - `startServer` runs `backchannel serve` behind `mcp-proxy` (stdio → Streamable HTTP,
 *   as a user bridges a stdio server), or `backchannel serve --http` directly.
 * - `openApp` opens a deep link that connects, switches to the Apps tab, fills the
 *   tool's arguments and presses Open App; it resolves once the app's frame is shown.
 * - `calls` records every JSON-RPC message the page sends to Inspector's backend
 *   (`POST /api/mcp/send`, which Inspector holds open until the server's answer is
 *   back), with when it left and when it was answered: what the app asked, read from
 *   outside the app.
 *
 * Facts this relies on (measured on 2.12.0): UI and backend share one port
 * (`CLIENT_PORT`); a deep link needs the API token; the app runs in two nested
 * iframes (the sandbox proxy on its own port, then an opaque-origin srcdoc); the
 * Monitoring sidebar logs every message and slows every app call (0.6–1.3 s with it
 * open, about 0.15 s with it closed) — `openApp` closes it unless asked not to.
 *
 * Every child runs in its own process group and is killed with it, also when the test
 * process dies first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Frame, type FrameLocator, type Page } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH, CLI } from "./helpers.js";

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
  /** `Date.now()` when Inspector's backend answered (for a request: once the server's answer was back). */
  answeredAt?: number;
}

/** An app shown in Inspector's Apps tab. */
export interface OpenedApp {
  page: Page;
  /** The app's document (the inner iframe), for locators. */
  app: FrameLocator;
  /** The app's frame, for `evaluate`. */
  frame: Frame;
  /** Every message the page sent so far, in order (see {@link SentMessage}). */
  readonly calls: readonly SentMessage[];
  /** The tools/call messages of `tool`, in order. */
  toolCalls(tool: string): SentMessage[];
  /** The `notifications/cancelled` the page sent (the app cancelled a call). */
  cancels(): SentMessage[];
  /** Opens or closes the Monitoring sidebar (the Messages panel). */
  setSidebar(open: boolean): Promise<void>;
  /** Empties the Messages panel (the sidebar must be open). */
  clearMessages(): Promise<void>;
  /** Closes the page. */
  close(): Promise<void>;
}

/** Options of {@link InspectorHost.openApp}. */
export interface OpenAppOptions {
  /** Leave the Monitoring sidebar open. Default false (closed: calls are 4–8× faster). */
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
  const args = [MCP_PROXY, "--port", String(port), "--host", "127.0.0.1", "--", process.execPath, CLI, "serve"];
  const child = startChild("mcp-proxy", process.execPath, args, env);
  await child.waitFor(/starting server on port/);
  return { kind, url: new URL(`http://127.0.0.1:${port}/mcp`), output: child.output, stop: child.stop };
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
  const calls = recordCalls(page);
  const link = new URL("/", session.origin);
  link.search = new URLSearchParams({
    serverUrl: server.url.href,
    transport: "http",
    autoConnect: session.token,
    openApp: tool,
    appArgs: Buffer.from(JSON.stringify(args)).toString("base64url"),
    autoOpen: session.token,
  }).toString();
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
  await page.locator('[data-app-status="ready"]').waitFor();
  const outer = `iframe[src="${session.sandboxUrl}"]`;
  await page.locator(outer).waitFor();
  const frame = await waitForAppFrame(page, session.sandboxUrl, timeout);
  return {
    page,
    app: page.frameLocator(outer).frameLocator("iframe"),
    frame,
    calls,
    toolCalls: (name) => calls.filter((call) => call.method === "tools/call" && call.tool === name),
    cancels: () => calls.filter((call) => call.method === "notifications/cancelled"),
    setSidebar,
    async clearMessages() {
      await page.getByRole("button", { name: "Clear", exact: true }).click();
    },
    close: () => page.close(),
  };
}

/** The app's frame: the one inside the sandbox proxy's frame. */
async function waitForAppFrame(page: Page, sandboxUrl: string, timeoutMs: number): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frame = page.frames().find((candidate) => candidate.parentFrame()?.url() === sandboxUrl);
    if (frame) return frame;
    if (Date.now() > deadline) throw new Error("Inspector showed no app frame inside its sandbox frame");
    await page.waitForEvent("frameattached", { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
  }
}

/** Records every JSON-RPC message `page` sends to Inspector's backend. */
function recordCalls(page: Page): SentMessage[] {
  const calls: SentMessage[] = [];
  const byRequest = new WeakMap<object, SentMessage>();
  page.on("request", (request) => {
    if (request.method() !== "POST" || !request.url().endsWith("/api/mcp/send")) return;
    const message = parseSent(request.postData());
    if (!message) return;
    byRequest.set(request, message);
    calls.push(message);
  });
  page.on("requestfinished", (request) => {
    const message = byRequest.get(request);
    if (message) message.answeredAt = Date.now();
  });
  return calls;
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
interface Child {
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

function startChild(name: string, command: string, args: string[], env: Record<string, string>): Child {
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
        await new Promise<void>((resolve) => {
          const timer = setTimeout(wake, left);
          function wake() {
            clearTimeout(timer);
            waiters.delete(wake);
            resolve();
          }
          waiters.add(wake);
        });
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

/** A TCP port free on 127.0.0.1 right now (Inspector refuses port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
