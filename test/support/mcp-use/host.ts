/// <reference lib="dom" />
// The functions passed to page.evaluate() run in the browser: they need the DOM types.
/**
 * The one-chat setting, in a real host that runs here: mcp-use's inspector (its chat
 * page calls the model from the browser and renders MCP Apps inline in the chat) on its
 * Node 22, against `backchannel serve --http`, with a scripted Chat Completions model
 * (model-server.ts), and headless Chromium driving the page as a person does:
 *
 *     const chat = await startOneChat(policy);
 *     await chat.configure();                     // Chat → provider "OpenAI Compatible", base URL, key, model
 *     await chat.send("Open … in the reader");   // typed into the chat's box, Send
 *     const reader = await chat.reader();        // the reader's frame, inside the chat
 *     await chat.close();
 *
 * Facts this relies on (measured on 20.3.10; docs/hosts.md): it prints "MCP Inspector
 * started at <url>" and takes the next free port from `--port`; its page connects to the
 * server directly first (refused: backchannel sends no CORS headers) and then through
 * its own proxy, by itself; the chat view renders an app in two nested frames (a sandbox
 * proxy on the other loopback name, then a srcdoc frame). Its page asks for web fonts
 * and sends telemetry to hosts this machine cannot reach: the browser refuses every
 * request off 127.0.0.1 and localhost at once, and `MCP_USE_ANONYMIZED_TELEMETRY=false`
 * turns the telemetry off.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Frame, type Page } from "playwright-core";
import { freePort } from "../../../deploy/free-port.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../helpers.js";
import { type Child, type InspectorServer, startChild, startServer } from "../inspector.js";
import { mcpUseInspectorCli, mcpUseNode } from "./install.js";
import { type ChatModelServer, type ChatPolicy, MODEL_ID, startChatModel } from "./model-server.js";

/** The running setting, with the browser. */
export interface OneChat extends ChatHost {
  /** The chat page. */
  page: Page;
  /** Errors the page threw. */
  pageErrors: string[];
  /** Chooses the provider "OpenAI Compatible" at the scripted model, as a person does in the chat's settings. */
  configure(): Promise<void>;
  /** Types `text` into the chat's box and presses Send; resolves with the page's `Date.now()` of the click. */
  send(text: string): Promise<number>;
  /** Resolves once no turn runs in the chat (its button says Send again, not Stop). */
  whenFree(): Promise<void>;
  /** The reader's frame in the chat (the `index`th app rendered, default the first), once its document is shown. */
  reader(index?: number): Promise<Frame>;
  /** What the host answered the app's `ui/initialize` in `frame` (its hostInfo, hostCapabilities, hostContext). */
  hostAnswer(frame: Frame): Promise<UiInitializeResult>;
  /** The texts of the person's messages in the chat (each with the time it shows), in order. */
  userMessages(): Promise<string[]>;
  /** Stops the browser, the inspector, the model and the server, and removes the data. */
  close(): Promise<void>;
}

/** The host's answer to `ui/initialize`, as far as the tests read it. */
export interface UiInitializeResult {
  hostInfo: { name: string; version: string };
  hostCapabilities: Record<string, unknown>;
}

/** Options of {@link startOneChat}. */
export interface OneChatOptions {
  /** Longest a step of the page may take (ms). Default 60,000. */
  timeoutMs?: number;
}

/** The processes of the setting, without the browser. */
export interface ChatHost {
  /** The scripted model. */
  model: ChatModelServer;
  /** `backchannel serve --http`. */
  server: InspectorServer;
  /** Its data directory. */
  dataDir: string;
  /** The inspector's page, e.g. `http://localhost:<port>/inspector`. */
  url: string;
  /** What the inspector printed. */
  output(): string;
  /** Stops the inspector, the model and the server, and removes the data. */
  stop(): Promise<void>;
}

/**
 * Starts `backchannel serve --http` on a fresh data directory, the scripted model with
 * `policy`, and the inspector (on its Node 22) pointed at the server.
 * @throws when any does not come up within `timeoutMs` (with what the inspector printed).
 */
export async function startChatHost(policy: ChatPolicy, timeoutMs = 60_000): Promise<ChatHost> {
  const root = await mkdtemp(join(tmpdir(), "backchannel-mcp-use-"));
  const dataDir = join(root, "data");
  const started: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    for (const part of started.reverse()) await part.stop().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  };
  try {
    const server = await startServer(dataDir, "http");
    started.push(server);
    const model = await startChatModel(policy);
    started.push({ stop: () => model.close() });
    const inspector: Child = startChild(
      "mcp-use inspector",
      mcpUseNode(),
      [mcpUseInspectorCli(), "--url", server.url.href, "--port", String(await freePort()), "--no-open"],
      // Its own HOME: whatever it keeps between runs stays in this run.
      { MCP_USE_ANONYMIZED_TELEMETRY: "false", HOME: root },
    );
    started.push(inspector);
    const [, url] = await inspector.waitFor(/MCP Inspector started at (http:\/\/\S+)/, timeoutMs);
    return { model, server, dataDir, url: url!, output: inspector.output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Starts the setting ({@link startChatHost}) and Chromium, and opens the inspector's page.
 * @throws when any does not come up (with what the inspector printed).
 */
export async function startOneChat(policy: ChatPolicy, options: OneChatOptions = {}): Promise<OneChat> {
  const timeout = options.timeoutMs ?? 60_000;
  const host = await startChatHost(policy, timeout);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close().catch(() => undefined);
    await host.stop();
  };
  try {
    const { model, url } = host;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(timeout);
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.route(/^https?:\/\/(?!(127\.0\.0\.1|localhost)[:/])/, (route) => route.abort("internetdisconnected"));
    // Every frame keeps the answer to the app's ui/initialize it sees pass (read, never changed): what the host told the app.
    await page.addInitScript(() =>
      addEventListener("message", (event: MessageEvent) => {
        const result = (event.data as { result?: { hostInfo?: unknown } } | null)?.result;
        if (result?.hostInfo !== undefined) (window as unknown as { __uiInitialize?: unknown }).__uiInitialize = result;
      }),
    );
    await page.goto(url);
    const main = page.getByRole("main");
    return {
      ...host,
      page,
      pageErrors,
      async configure() {
        await page.getByRole("button", { name: "Chat", exact: true }).click();
        // The model button names the provider's model chosen so far (a hosted one at first).
        await main.getByRole("button", { name: /\// }).last().click();
        const dialog = page.getByRole("dialog", { name: "Configure Chat" });
        await dialog.getByRole("combobox").first().click();
        await page.getByRole("option", { name: "OpenAI Compatible" }).click();
        await dialog.getByRole("textbox", { name: "http://localhost:11434/v1" }).fill(`${model.url}/v1`);
        // Marked optional, but Save stays disabled without one.
        await dialog.getByRole("textbox", { name: /API key/ }).fill("sk-local-stand-in");
        // The model list comes from GET /v1/models.
        await dialog.getByRole("combobox").nth(1).click();
        await page.getByRole("option", { name: MODEL_ID, exact: true }).click();
        await dialog.getByRole("button", { name: "Save Configuration" }).click();
        await main.getByRole("button", { name: MODEL_ID, exact: true }).waitFor();
      },
      async send(text) {
        await main.getByRole("textbox", { name: /Ask a question/ }).fill(text);
        const button = main.getByRole("button", { name: "Send" });
        await button.evaluate((element) =>
          element.addEventListener("click", () => ((window as unknown as { __sentAt?: number }).__sentAt = Date.now()), {
            capture: true,
            once: true,
          }),
        );
        await button.click();
        return page.evaluate(() => (window as unknown as { __sentAt: number }).__sentAt);
      },
      whenFree: () => main.locator(`${SEND_BUTTON}[title="Send"]`).waitFor(),
      async reader(index = 0) {
        const sandbox = await (await main.locator("iframe").nth(index).elementHandle())?.contentFrame();
        if (!sandbox) throw new Error("the chat shows no app frame");
        const frame = await (await sandbox.locator("iframe").elementHandle())?.contentFrame();
        if (!frame) throw new Error("the app's sandbox holds no frame");
        await frame.locator("#doc [data-block]").first().waitFor();
        return frame;
      },
      hostAnswer: (frame) => frame.evaluate(() => (window as unknown as { __uiInitialize: UiInitializeResult }).__uiInitialize),
      userMessages: () => main.locator(USER_MESSAGE).evaluateAll((nodes) => nodes.map((node) => (node.textContent ?? "").trim())),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The chat's Send button: titled "Stop streaming" while a turn runs (20.3.10's markup). */
const SEND_BUTTON = "[data-testid='chat-send-button']";

/** A person's message in the chat's list, with its time (20.3.10's markup). */
const USER_MESSAGE = "[data-testid='chat-message-user']";
