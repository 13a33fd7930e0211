/**
 * What each client is offered, and what its model is told (server/client-view.ts),
 * through the real server and the SDK's client: as a client that shows no apps (a
 * terminal agent), as Gemini CLI would use it (it lists every tool to its model, and
 * its model may call any), as Claude Code opens it (2026-07-28, the per-request
 * envelope; with the plugin's `--wake hook`), as a chat page (no shell), and as an
 * MCP Apps host; over stdio and over HTTP (a 2025 client, whose later requests are
 * known by the session id its `initialize` got; a 2026-07-28 client, by each request's
 * envelope).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type CallToolResult, Client, type ClientCapabilities, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { APP_SIDE_EXTENSIONS, APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";
import { stopBrowserHost } from "./support/browser-host.js";
import { AS_CLAUDE_CODE } from "./support/claude-code/session.js";
import { connectServer, tempDataDir } from "./support/helpers.js";
import { serveHttp, stopHttpServers } from "./support/http-serve.js";

/** The app-only tools: what no client that shows no apps may list or call. */
const APP_ONLY = [
  "poll_ui_messages",
  "notify_agent",
  "reader_state",
  "reader_record",
  "reader_position",
  "app_state",
  "watch_agent_messages",
  "browser_link",
];
/** Every tool of the server. */
const EVERY_TOOL = [...APP_ONLY, "notify_ui", "poll_agent_messages", "open_reader", "post_wall", "read_recipe", "open_app", "save_app"].sort();

const IN_CHAT: ClientCapabilities = { extensions: APPS_HOST_EXTENSIONS };
/** What Gemini CLI 0.61 declares: roots only. */
const GEMINI: ClientCapabilities = { roots: {} };

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir: dataDir, cleanup } = await tempDataDir()));
after(async () => {
  // The browser host the terminal agents' open_reader started, before its folder goes.
  stopBrowserHost({ BACKCHANNEL_HOME: dataDir });
  await stopHttpServers();
  await cleanup();
});

/** The names of the tools `client` is offered, sorted. */
async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

/** Arguments each app-only tool takes (reader_record's: a thread message). */
const APP_ONLY_ARGUMENTS: Record<string, Record<string, unknown>> = {
  notify_agent: { event: "ping" },
  reader_position: { block: 0 },
  reader_record: {
    thread_id: "t-1",
    quote: "q",
    paragraph: "p",
    anchor: { block: 0, start: 0, end: 1 },
    message: { id: "m-1", role: "user", text: "Hi?" },
  },
};

/** What calling each app-only tool gives `client`: `APP_ONLY_TOOL` when refused for being app-only, else "served". */
async function appOnlyCalls(client: Client): Promise<string[]> {
  const codes: string[] = [];
  for (const name of APP_ONLY) {
    const result = (await client.callTool({ name, arguments: { channel_id: "ch-surface", ...APP_ONLY_ARGUMENTS[name] } })) as CallToolResult;
    const code = (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
    if (result.isError && code !== "APP_ONLY_TOOL") throw new Error(`${name} failed otherwise: ${JSON.stringify(result.content)}`);
    codes.push(code ?? "served");
  }
  return codes;
}

describe("a client that shows no apps (stdio)", () => {
  test("as a bare client and as Gemini CLI would: no app-only tool listed, each refused with APP_ONLY_TOOL when called", async () => {
    for (const capabilities of [{}, GEMINI]) {
      const client = await connectServer(dataDir, {}, { capabilities, name: "gemini-cli-mcp-client" });
      try {
        assert.deepEqual(
          await toolNames(client),
          EVERY_TOOL.filter((name) => !APP_ONLY.includes(name)),
        );
        assert.deepEqual(
          await appOnlyCalls(client),
          APP_ONLY.map(() => "APP_ONLY_TOOL"),
        );
        const refused = (await client.callTool({ name: "poll_ui_messages", arguments: { channel_id: "ch-surface" } })) as CallToolResult;
        assert.match(JSON.stringify(refused.content), /called by an app .* this client shows no apps/);
      } finally {
        await client.close();
      }
    }
  });

  test("as Claude Code opens it (2026-07-28): told to give the person the link, and open_reader returns it in structuredContent", async () => {
    const client = await connectServer(dataDir, {}, AS_CLAUDE_CODE);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      assert.deepEqual(
        await toolNames(client),
        EVERY_TOOL.filter((name) => !APP_ONLY.includes(name)),
      );
      const told = client.getInstructions() ?? "";
      assert.match(told, /This client shows no apps: open_reader and open_app return a link \(reader_url, app_url\).*give the person that link\./);
      assert.match(told, /keep a watcher armed/, "a terminal agent has a shell");
      assert.ok(told.length <= 2048, `instructions of ${told.length} characters (Claude Code cuts them at 2 KB)`);
      const opened = (await client.callTool({ name: "open_reader", arguments: { markdown: "# Far\n\nA page for the browser." } })) as CallToolResult;
      const structured = opened.structuredContent as { channel_id: string; reader_url?: string; next_step?: string; watch_command?: string };
      assert.match(structured.reader_url ?? "", new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?k=[A-Za-z0-9_-]{43}#${structured.channel_id}$`));
      assert.match(structured.next_step ?? "", /^Give the person the link below: it opens the reader in their browser\. Run `.* watch /);
      assert.ok(
        structured.next_step?.endsWith(`The link: ${structured.reader_url}`),
        "the model of Claude Code and Codex sees only structuredContent: the link is in it",
      );
      assert.ok(structured.watch_command);
    } finally {
      await client.close();
    }
  });

  test("under the plugin (serve --wake hook): never told to arm a watcher, nor handed a watch command", async () => {
    const client = await connectServer(dataDir, {}, { ...AS_CLAUDE_CODE, args: ["--wake", "hook"] });
    try {
      const told = client.getInstructions() ?? "";
      assert.match(told, /Arm nothing: backchannel's wake hook wakes you/);
      assert.doesNotMatch(told, /watch|background/i);
      const opened = (await client.callTool({ name: "open_reader", arguments: { markdown: "# Hooked\n\nWoken by the plugin." } })) as CallToolResult;
      const structured = opened.structuredContent as Record<string, string>;
      assert.equal(structured.watch_command, undefined);
      assert.match(structured.next_step ?? "", /Arm nothing: backchannel's wake hook wakes you/);
      assert.doesNotMatch(JSON.stringify(opened), /run_in_background| watch ch-|in the background/);
    } finally {
      await client.close();
    }
  });

  test("--apps: a bridge that drops its client's capabilities (mcp-proxy) is taken for an MCP Apps host", async () => {
    const client = await connectServer(dataDir, {}, { capabilities: {}, name: "mcp-proxy", args: ["--apps"] });
    try {
      assert.deepEqual(await toolNames(client), EVERY_TOOL);
    } finally {
      await client.close();
    }
  });
});

describe("an MCP Apps host, a chat page and backchannel's own app side", () => {
  for (const modern of [false, true]) {
    test(`an in-chat host (${modern ? "2026-07-28" : "2025-11-25"}): every tool, the reader in the chat, no link`, async () => {
      const client = await connectServer(dataDir, {}, { capabilities: IN_CHAT, modern });
      try {
        assert.deepEqual(await toolNames(client), EVERY_TOOL);
        assert.deepEqual(
          await appOnlyCalls(client),
          APP_ONLY.map(() => "served"),
        );
        const told = client.getInstructions() ?? "";
        assert.match(told, /^backchannel links apps in the chat to you/);
        assert.doesNotMatch(told, /reader_url/);
        const opened = (await client.callTool({ name: "open_reader", arguments: { markdown: "# Here\n\nIn the chat." } })) as CallToolResult;
        assert.equal((opened.structuredContent as { reader_url?: string }).reader_url, undefined);
      } finally {
        await client.close();
      }
    });
  }

  test("a chat page (no shell): never told to run a background command", async () => {
    const client = await connectServer(dataDir, {}, { capabilities: IN_CHAT, name: "claude-ai" });
    try {
      const told = client.getInstructions() ?? "";
      assert.doesNotMatch(told, /background|watch_command|watcher/i);
      assert.match(told, /poll_agent_messages \{"channel_id":"<channel_id>","wait_ms":120000\}/);
      const opened = (await client.callTool({ name: "open_reader", arguments: { markdown: "# Chat\n\nNo shell here." } })) as CallToolResult;
      assert.doesNotMatch(JSON.stringify(opened), /background|watch_command/);
    } finally {
      await client.close();
    }
  });

  test("the remote watcher's client (the app-side extension) may call the app-only tools, and shows no app", async () => {
    const client = await connectServer(dataDir, {}, { capabilities: { extensions: APP_SIDE_EXTENSIONS } });
    try {
      assert.deepEqual(await toolNames(client), EVERY_TOOL);
      assert.match(client.getInstructions() ?? "", /This client shows no apps/);
    } finally {
      await client.close();
    }
  });
});

describe("over HTTP", () => {
  let url: URL;
  before(async () => ({ url } = await serveHttp([], { BACKCHANNEL_HOME: dataDir })));

  /** A client of `serve --http`: 2025-11-25 (stateless, its session id carries what it declared), or 2026-07-28. */
  async function httpClient(
    capabilities: ClientCapabilities,
    modern: boolean,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client(
      { name: "http-surface", version: "0" },
      { capabilities, ...(modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}) },
    );
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    return { client, transport };
  }

  for (const modern of [false, true]) {
    const era = modern ? "2026-07-28" : "2025-11-25";
    test(`${era}: a client that shows no apps is offered no app-only tool on every later request; an in-chat host is`, async () => {
      const plain = await httpClient(GEMINI, modern);
      const host = await httpClient(IN_CHAT, modern);
      try {
        if (!modern) {
          assert.match(plain.transport.sessionId ?? "", /^bc1-s-[0-9a-f]{24}$/);
          assert.match(host.transport.sessionId ?? "", /^bc1-ats-[0-9a-f]{24}$/);
        }
        assert.deepEqual(
          await toolNames(plain.client),
          EVERY_TOOL.filter((name) => !APP_ONLY.includes(name)),
        );
        assert.deepEqual(
          await appOnlyCalls(plain.client),
          APP_ONLY.map(() => "APP_ONLY_TOOL"),
        );
        assert.deepEqual(await toolNames(host.client), EVERY_TOOL);
        assert.deepEqual(
          await appOnlyCalls(host.client),
          APP_ONLY.map(() => "served"),
        );
      } finally {
        await plain.client.close();
        await host.client.close();
      }
    });
  }

  test("a 2025 request that says nothing of its client (no initialize, no session id) is served as before: everything", async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    const text = await response.text();
    for (const name of APP_ONLY) assert.ok(text.includes(`"${name}"`), name);
  });
});
