/**
 * Hostile input through real processes: text built to make a naive regular expression
 * quadratic, a stdio request over the size limit, terminal escape sequences on their
 * way to a terminal (status line, watcher, hook), a flood on stdin, named pipes where
 * files belong, forged Host headers, a non-loopback bind address, and what the server
 * advertises and tells the caller on each transport.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { FileStore } from "../store/file/file-store.js";
import { mkfifo } from "./support/fifo.js";
import { cpuMsOf } from "./support/cpu-time.js";
import { CLI, connectServer, pidOf, spawnWatcher, standInHost, stderrOf, structured, tempDataDir } from "./support/helpers.js";
import { APPS_HOST_EXTENSIONS } from "../protocol/client-capabilities.js";

/** A character that must never reach a terminal from outside text: C0 (but the newline ending a line), DEL, C1, bidi controls. */
const UNSAFE_FOR_TERMINALS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Each class of escape the sanitiser must defuse, with a visible word inside. */
const ESCAPES: Readonly<Record<string, string>> = {
  "OSC 52 clipboard write": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
  "OSC 8 hyperlink": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
  "SGR 8 conceal": "\x1b[8mhidden\x1b[0m",
  "C1 CSI and OSC": "\u009b2J\u009d0;title\u009c",
  "bidi overrides": "\u202eevil\u202c \u2066isolated\u2069",
};
/** All of them in one text, between plain words. */
const HOSTILE = `Back ${Object.values(ESCAPES).join(" ")} soon`;

/** Asserts that `text` holds nothing a terminal would act on. */
function assertTerminalSafe(text: string, where: string): void {
  const found = UNSAFE_FOR_TERMINALS.exec(text);
  assert.equal(found, null, `${where} carries U+${found?.[0].codePointAt(0)?.toString(16).padStart(4, "0")}: ${JSON.stringify(text)}`);
}

let dataDir: string;
let cleanup: () => Promise<void>;
before(async () => {
  ({ dir: dataDir, cleanup } = await tempDataDir());
});
after(() => cleanup());

/** A finished child process. */
interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `backchannel ...args` on the test's data directory with `input` on stdin; kills it after 10 s (a hang). */
function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Run {
  const started = performance.now();
  const result = spawnSync(process.execPath, [CLI, ...args], {
    input: options.input ?? "",
    encoding: "utf8",
    env: { ...process.env, BACKCHANNEL_HOME: dataDir, ...options.env },
    timeout: 10_000,
    killSignal: "SIGKILL",
  });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr, ms: performance.now() - started };
}

describe("every text step is linear: open_reader on adversarial 1 MiB documents", () => {
  const MIB = 1024 * 1024;
  /** Documents that made the old word count and title choice take minutes. */
  const ADVERSARIAL: Readonly<Record<string, { markdown?: string; text?: string }>> = {
    "a run of punctuation": { text: "-".repeat(MIB) },
    "a spaced heading": { markdown: `# a${" ".repeat(MIB)}b\n` },
    "a heading of closing hashes": { markdown: `# a${" #".repeat(MIB / 2)}x\n` },
    "deep nesting: blockquotes": { markdown: `${">".repeat(MIB)} deep\n` },
    "deep nesting: lists and brackets": { markdown: `${"- ".repeat(MIB / 4)}${"[(".repeat(MIB / 4)}x\n` },
    "a heading line of letters and spaces": { markdown: `# ${"a ".repeat(MIB / 2)}\n` },
    "a run of punctuation beyond ASCII": { markdown: `# ${"—".repeat(MIB)}\n` },
  };
  /**
   * Most CPU time the server may spend on one call with 1 MiB, receiving, parsing and
   * storing it included: the old code spent minutes. CPU time, not wall-clock time, so
   * that the bound holds on a loaded machine; where /proc is missing, only the call's
   * timeout bounds it.
   */
  const BOUND_MS = 500;
  let client: Client;
  /** The server's CPU time spent in `call`, in milliseconds (0 where /proc is missing). */
  async function serverCpuMs(call: () => Promise<unknown>): Promise<number> {
    const pid = pidOf(client);
    const cpuBefore = cpuMsOf(pid);
    await call();
    const cpuAfter = cpuMsOf(pid);
    return cpuBefore === undefined || cpuAfter === undefined ? 0 : cpuAfter - cpuBefore;
  }
  before(async () => {
    client = await connectServer(dataDir);
    // Warm the path once (first-call compilation and file creation are not what is measured).
    await client.callTool({ name: "open_reader", arguments: { markdown: "# warm up" } });
  });
  after(() => client.close());

  for (const [name, document] of Object.entries(ADVERSARIAL)) {
    test(`${name}: under ${BOUND_MS} ms of the server's CPU, and the server answers the next call`, async (t) => {
      // The old code took minutes: the timeout ends the call long before.
      const ms = await serverCpuMs(async () => structured(await client.callTool({ name: "open_reader", arguments: document }, { timeout: 10_000 })));
      t.diagnostic(`${Math.round(ms)} ms of the server's CPU`);
      assert.ok(ms < BOUND_MS, `${name}: ${Math.round(ms)} ms of CPU`);
      await client.listTools(undefined, { timeout: 5000 });
    });
  }

  test("app-bound text: a record of 1 MiB is answered fast too", async () => {
    const opened = structured<{ channel_id: string }>(await client.callTool({ name: "open_reader", arguments: { text: "a b c" } }));
    const record = () =>
      client.callTool({
        name: "reader_record",
        arguments: {
          channel_id: opened.channel_id,
          thread_id: "t-1",
          quote: "-".repeat(20_000),
          paragraph: "-".repeat(50_000),
          anchor: { block: 0, start: 0, end: 1 },
          message: { id: "m-1", role: "user", text: "-".repeat(MIB) },
        },
      });
    const ms = await serverCpuMs(async () => structured(await record()));
    assert.ok(ms < BOUND_MS, `${Math.round(ms)} ms of CPU`);
  });

  test("deep nesting: notify_ui data nested 300,000 deep is refused at once, and the server goes on", async () => {
    // The SDK's client cannot even write such a value (JSON.stringify recurses): the request is written by hand.
    const server = rawServer(dataDir);
    try {
      const depth = 300_000;
      const data = `${"[".repeat(depth)}1${"]".repeat(depth)}`;
      await server.response(1);
      const cpuBefore = cpuMsOf(server.pid) ?? 0;
      server.send(
        `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify_ui","arguments":{"channel_id":"deep","event":"x","data":${data}}}}`,
      );
      const refused = await server.response(2);
      const ms = (cpuMsOf(server.pid) ?? 0) - cpuBefore;
      assert.match(JSON.stringify(refused), /nested at most 64 levels deep/);
      assert.ok(ms < BOUND_MS, `${Math.round(ms)} ms of CPU`);
      server.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
      assert.ok(((await server.response(3)).result as { tools: unknown[] }).tools.length > 0);
    } finally {
      server.close();
    }
  });
});

describe("a stdio request over the size limit", () => {
  test("gets an error naming the limit, and the server stays up for the next call", async () => {
    const client = await connectServer(dataDir);
    try {
      const huge = "word ".repeat((11 * 1024 * 1024) / 5);
      await assert.rejects(
        client.callTool({ name: "open_reader", arguments: { markdown: huge } }, { timeout: 20_000 }),
        /more than the 10 MiB .* reads from stdio/,
      );
      const after = structured<{ words: number }>(await client.callTool({ name: "open_reader", arguments: { text: "still here" } }));
      assert.equal(after.words, 2);
      assert.match(stderrOf(client), /a request of \d+ bytes refused/);
    } finally {
      await client.close();
    }
  });
});

describe("terminal escape sequences never reach a terminal", () => {
  const host = standInHost();
  let agent: Client;
  let store: FileStore;
  before(async () => {
    agent = await connectServer(dataDir, host.env);
    store = new FileStore({ dataDir });
  });
  after(() => agent.close());

  test("post_wall keeps the words and drops the escapes; the status line shows it clean", async () => {
    const posted = await agent.callTool({ name: "post_wall", arguments: { text: HOSTILE } });
    structured(posted);
    assertTerminalSafe(JSON.stringify(posted.content), "post_wall's result");
    // A channel of the session, so that the status line has something of this session to show.
    await agent.callTool({ name: "open_reader", arguments: { text: "x" } });
    const line = cli(["statusline"], { input: "{}", env: host.env });
    assert.equal(line.code, 0, line.stderr);
    assertTerminalSafe(line.stdout.replace(/\n$/, ""), "the status line");
    assert.match(line.stdout, /Back .*click.*hidden.*evil.*isolated/);
  });

  test("a wall written raw into the session file (not through post_wall) is cleaned by the status line", async () => {
    await store.sessions.update(host.key, (record) => ({
      ...record,
      wall: { text: HOSTILE, posted_at: new Date().toISOString(), until: new Date(Date.now() + 60_000).toISOString() },
    }));
    const line = cli(["statusline"], { input: "{}", env: host.env });
    assert.equal(line.code, 0, line.stderr);
    assertTerminalSafe(line.stdout.replace(/\n$/, ""), "the status line");
    assert.match(line.stdout, /Back .*hidden/);
  });

  test("the watcher's lines (follow and exit mode) carry a question's words, not its escapes", async () => {
    const channel = "escapes-watch";
    const follower = spawnWatcher(dataDir, [channel, "--follow", "--allow-missing", "--timeout", "10"]);
    await follower.ready();
    for (const [name, sequence] of Object.entries(ESCAPES)) await store.append(channel, "agent", "ask", { question: `${name}: ${sequence}` });
    const lines = await follower.lines(Object.keys(ESCAPES).length);
    follower.child.kill();
    for (const line of lines) assertTerminalSafe(line, "a watcher line");
    assert.match(lines.join("\n"), /click[\s\S]*hidden/);
    const exit = cli(["watch", channel, "--timeout", "5"]);
    assert.equal(exit.code, 0, exit.stderr);
    assertTerminalSafe(exit.stdout.replace(/\n$/, ""), "the watcher's summary");
    const badId = cli(["watch", `a\u009b2J\u202e`, "--timeout", "1"]);
    assert.equal(badId.code, 1);
    assertTerminalSafe(badId.stderr.replace(/\n$/, ""), "the watcher's error");
  });

  test("the hook's panel line, and its note about unreadable input, are clean", () => {
    const input = JSON.stringify({
      hook_event_name: "PostToolUse",
      tool_name: "mcp__backchannel__reader_state",
      tool_input: {},
      tool_response: { content: [{ type: "text", text: `Reader state of channel x: "${HOSTILE}" with 0 threads.` }] },
    });
    const hook = cli(["hook", "post-tool-use"], { input });
    assert.equal(hook.code, 0, hook.stderr);
    const output = JSON.parse(hook.stdout) as { hookSpecificOutput: { updatedToolOutput: string; additionalContext?: string } };
    assertTerminalSafe(output.hookSpecificOutput.updatedToolOutput, "the hook's panel line");
    assert.match(output.hookSpecificOutput.updatedToolOutput, /Back .*hidden/);
    const garbage = cli(["hook", "post-tool-use"], { input: `${HOSTILE} not json` });
    assert.equal(garbage.code, 0);
    assert.equal(garbage.stdout, "");
    assertTerminalSafe(garbage.stderr.replace(/\n$/, ""), "the hook's note");
  });
});

describe("smaller faults", () => {
  /** The preload that reports a process's peak memory. */
  const REPORT_MAX_RSS = fileURLToPath(new URL("./fixtures/report-max-rss.js", import.meta.url));

  /**
   * Runs `backchannel ...args` with `bytes` of zeros piped to its stdin by `head`, which
   * writes far faster than this process could, to the command's exit.
   * @returns the run, and the command's peak resident memory.
   */
  async function flood(args: string[], bytes: number): Promise<Run & { maxRss: number }> {
    const started = performance.now();
    const command = `head -c ${bytes} /dev/zero | "${process.execPath}" --import "${REPORT_MAX_RSS}" "${CLI}" ${args.join(" ")}`;
    const child = spawn("/bin/sh", ["-c", command], { env: { ...process.env, BACKCHANNEL_HOME: dataDir, CLAUDE_PID: "6161" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
    const maxRss = Number(/max-rss: (\d+)/.exec(stderr)?.[1] ?? Number.NaN);
    return { code, signal, stdout, stderr: stderr.replace(/max-rss: \d+\n/, ""), maxRss, ms: performance.now() - started };
  }

  for (const args of [["hook", "post-tool-use"], ["statusline"]]) {
    test(`${args.join(" ")} on 700 MB of stdin exits 0, prints nothing, and holds little of it`, async () => {
      const run = await flood(args, 700 * 1024 * 1024);
      assert.deepEqual([run.code, run.signal, run.stdout], [0, null, ""], run.stderr);
      assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack trace");
      // Node itself takes about 50 MB; the old code held everything that came in its first second.
      assert.ok(run.maxRss < 150 * 1024 * 1024, `peak memory ${Math.round(run.maxRss / 1024 / 1024)} MB`);
    });
  }

  test("a channel id or app name that a command line takes for an option, or Windows for a device, is refused by every tool", async () => {
    const client = await connectServer(dataDir);
    try {
      const html = "<p>hi</p>";
      for (const id of ["-h", "--timeout", "-rf", "CON", "nul", "COM1", "LPT9", "aux", "prn"]) {
        for (const [name, args] of [
          ["open_reader", { channel_id: id, text: "hello" }],
          ["open_app", { channel_id: id, html }],
          ["notify_ui", { channel_id: id, event: "x" }],
          ["poll_agent_messages", { channel_id: id }],
        ] as const) {
          const result = await client.callTool({ name, arguments: args });
          assert.equal(result.isError, true, `${name} ${id}`);
          assert.match(JSON.stringify(result.content), /not starting with|device name/, `${name} ${id}`);
        }
        const { channel_id } = structured<{ channel_id: string }>(await client.callTool({ name: "open_app", arguments: { html } }));
        const saved = await client.callTool({ name: "save_app", arguments: { channel_id, name: id, description: "d" } });
        assert.equal(saved.isError, true, `save_app ${id}`);
      }
      // The watcher refuses such an id as a channel id, never as its own option: no exit 0.
      const watched = cli(["watch", "--timeout", "1", "--", "-h"]);
      assert.equal(watched.code, 1, watched.stdout + watched.stderr);
      assert.match(watched.stderr, /invalid channel id/);
    } finally {
      await client.close();
    }
  });

  test("open_reader on files that say 0 bytes (/proc) reads them whole; one that cannot be read says so, not the data directory", async () => {
    const client = await connectServer(dataDir);
    try {
      const status = structured<{ words: number }>(await client.callTool({ name: "open_reader", arguments: { path: "/proc/self/status" } }));
      assert.ok(status.words > 20, `words: ${status.words}`);
      const mem = await client.callTool({ name: "open_reader", arguments: { path: "/proc/self/mem" } });
      assert.equal(mem.isError, true);
      assert.match(JSON.stringify(mem.content), /could not read \/proc\/self\/mem \(EIO\)/);
    } finally {
      await client.close();
    }
  });

  test("install statusline, uninstall and statusline --stash refuse a named pipe instead of hanging", async () => {
    const settings = join(dataDir, "fifo-settings.json");
    await mkfifo(settings);
    for (const command of ["install", "uninstall"]) {
      const run = cli([command, "statusline", "--settings", settings]);
      assert.equal(run.signal, null, `${command} hung on a named pipe`);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /is not a regular file/);
    }
    const stash = join(dataDir, "fifo-stash.json");
    await mkfifo(stash);
    const line = cli(["statusline", "--stash", stash], { input: "{}" });
    assert.equal(line.signal, null, "statusline --stash hung on a named pipe");
    assert.equal(line.code, 0);
  });

  describe("serve --http", () => {
    let server: ChildProcess;
    let url: URL;
    before(async () => {
      ({ server, url } = await startHttp([]));
    });
    after(() => server.kill());

    test("Host: evil.com@localhost and other forged hosts get 403, never 500", async () => {
      for (const host of [
        "evil.com@localhost",
        "evil.com@127.0.0.1:1",
        "localhost@evil.com",
        "localhost:80@localhost",
        "[::1]@evil.com",
        "evil.com",
      ]) {
        assert.equal(await postWithHost(url, host), 403, host);
      }
      assert.equal(await postWithHost(url, `localhost:${url.port}`), 200);
    });

    test("a Host no URL can be built from gets 400, and so does an absolute URL as the request target: never 500", async () => {
      for (const host of ["localhost:99999", "127.0.0.1:65536", "127.999.999.999", "127.0.0.09"]) {
        assert.equal(await postWithHost(url, host), 400, host);
      }
      assert.equal(await postWithHost(url, `localhost:${url.port}`, "http://evil.example/mcp"), 400, "absolute-form target");
    });

    test("advertises no listChanged it cannot send; open_reader {} and the instructions do not offer path", async () => {
      const client = new Client({ name: "hostile-http", version: "0.0.0" }, { capabilities: { extensions: APPS_HOST_EXTENSIONS } });
      await client.connect(new StreamableHTTPClientTransport(url));
      try {
        const capabilities = client.getServerCapabilities();
        assert.notEqual(capabilities?.tools?.listChanged, true, JSON.stringify(capabilities));
        assert.notEqual(capabilities?.resources?.listChanged, true, JSON.stringify(capabilities));
        assert.doesNotMatch(client.getInstructions() ?? "", /\bpath\b/);
        const { tools } = await client.listTools();
        const open = tools.find((tool) => tool.name === "open_reader")!;
        assert.doesNotMatch(open.description ?? "", /\bpath\b/);
        assert.equal((open.inputSchema.properties as Record<string, unknown>).path, undefined);
        const empty = await client.callTool({ name: "open_reader", arguments: {} });
        assert.equal(empty.isError, true);
        assert.doesNotMatch(JSON.stringify(empty.content), /\bpath\b/);
        assert.match(JSON.stringify(empty.content), /markdown or text/);
      } finally {
        await client.close();
      }
    });
  });

  for (const host of ["0.0.0.0", "::", "192.0.2.1"]) {
    test(`serve --http --host ${host} refuses to start without authentication`, () => {
      const run = cli(["serve", "--http", "--port", "0", "--host", host]);
      assert.equal(run.signal, null, `it listened on ${host}: ${run.stderr}`);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /loopback.*authentication/);
    });
  }

  test("serve --http --host localhost and ::1 are loopback, and start", async () => {
    for (const host of ["localhost", "::1", "127.0.0.2"]) {
      const { server } = await startHttp(["--host", host]);
      server.kill();
    }
  });
});

describe("conformance", () => {
  test("over stdio, tools.listChanged is advertised (descriptions change), resources.listChanged is not", async () => {
    const client = await connectServer(dataDir);
    try {
      const capabilities = client.getServerCapabilities();
      assert.equal(capabilities?.tools?.listChanged, true);
      assert.notEqual(capabilities?.resources?.listChanged, true, JSON.stringify(capabilities));
      assert.match(client.getInstructions() ?? "", /"path"/);
    } finally {
      await client.close();
    }
  });

  test("length limits count characters (code points), not UTF-16 units: 150 emoji are 150, in a wall and a title", async () => {
    const client = await connectServer(dataDir, { CLAUDE_PID: "7272" });
    try {
      const emoji = "😀".repeat(150);
      const wall = structured<{ until: string }>(await client.callTool({ name: "post_wall", arguments: { text: emoji } }));
      assert.ok(wall.until);
      const tooLong = await client.callTool({ name: "post_wall", arguments: { text: "👍".repeat(201) } });
      assert.match(JSON.stringify(tooLong.content), /201 characters; keep it to 200/);
      const opened = structured<{ title: string }>(await client.callTool({ name: "open_reader", arguments: { title: emoji, text: "x" } }));
      assert.equal(opened.title, emoji);
      const longTitle = await client.callTool({ name: "open_reader", arguments: { title: "👍".repeat(201), text: "x" } });
      assert.equal(longTitle.isError, true);
      assert.match(JSON.stringify(longTitle.content), /title: has 201 characters; keep it to 200/);
      // The advertised schema states the same limit, in JSON Schema's own unit (code points).
      const { tools } = await client.listTools();
      const title = (tools.find((tool) => tool.name === "open_reader")!.inputSchema.properties as Record<string, { maxLength?: number }>).title;
      assert.equal(title?.maxLength, 200);
    } finally {
      await client.close();
    }
  });

  for (const modern of [false, true]) {
    const era = modern ? "2026-07-28" : "2025-11-25";
    test(`a malformed elicitation answer ({"text": 5}) is reported as such, not as an empty document (${era})`, async () => {
      const client = await connectServer(
        dataDir,
        {},
        {
          modern,
          capabilities: { elicitation: { form: {} }, extensions: APPS_HOST_EXTENSIONS },
          prepare: (c) => c.setRequestHandler("elicitation/create", () => ({ action: "accept", content: { text: 5 } })),
        },
      );
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), era);
        const result = await client.callTool({ name: "open_reader", arguments: {} });
        assert.equal(result.isError, true);
        const text = JSON.stringify(result.content);
        assert.doesNotMatch(text, /empty|cannot ask/);
        assert.match(text, /did not fit its form \(text: .*expected string, received number\)/);
      } finally {
        await client.close();
      }
    });
  }
});

/** A `backchannel serve` process spoken to in raw JSON-RPC lines, initialized. */
interface RawServer {
  pid: number;
  /** Writes `line` and a newline to the server's stdin. */
  send(line: string): void;
  /** Resolves with the response to request `id`. */
  response(id: number): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
  close(): void;
}

/** Starts `backchannel serve` on `dataDir` and initializes it by hand, for requests the SDK's client cannot write. */
function rawServer(dataDir: string): RawServer {
  const child = spawn(process.execPath, [CLI, "serve"], { env: { ...process.env, BACKCHANNEL_HOME: dataDir }, stdio: ["pipe", "pipe", "ignore"] });
  const responses = new Map<number, { result?: unknown; error?: { code: number; message: string } }>();
  const waiters = new Map<number, () => void>();
  let pending = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: { code: number; message: string } };
      if (typeof message.id !== "number") continue;
      responses.set(message.id, message);
      waiters.get(message.id)?.();
    }
  });
  const send = (line: string) => child.stdin!.write(`${line}\n`);
  send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    }),
  );
  send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return {
    pid: child.pid!,
    send,
    async response(id) {
      if (!responses.has(id)) await new Promise<void>((resolve) => waiters.set(id, resolve));
      return responses.get(id)!;
    },
    close: () => child.kill(),
  };
}

/** Starts `backchannel serve --http --port 0 ...args` on the data directory; resolves with its MCP URL once it listens. */
async function startHttp(args: string[]): Promise<{ server: ChildProcess; url: URL }> {
  const server = spawn(process.execPath, [CLI, "serve", "--http", "--port", "0", ...args], {
    env: { ...process.env, BACKCHANNEL_HOME: dataDir },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const url = await new Promise<URL>((resolve, reject) => {
    server.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = stderr.match(/MCP server at (http:\/\/[^\s,]+)/);
      if (match) resolve(new URL(match[1]!));
    });
    server.once("exit", (code) => reject(new Error(`serve --http ${args.join(" ")} exited (${code}): ${stderr}`)));
  });
  return { server, url };
}

/** POSTs tools/list to `url` (its request target `target`, by default its path) with the Host header `host` (fetch will not forge Host); resolves with the status. */
function postWithHost(url: URL, host: string, target = url.pathname): Promise<number> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
  const headers = { host, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: target, method: "POST", headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(body);
  });
}
