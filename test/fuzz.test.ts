/**
 * Hostile tool input through MCP: at least 10,000 generated calls across every tool
 * the server lists (wrong types, missing and extra fields, huge strings, deep nesting,
 * control and Unicode characters, path tricks in every string, ids at and past every
 * limit). Every call must be answered, no answer may carry a stack trace, the server
 * must stay up without an internal error, and no file may appear outside the data
 * directory. The seed is printed; set FUZZ_SEED to replay a run.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { CHANNEL_ID_PATTERN, SESSION_KEY_PATTERN } from "../core/ids.js";
import { connectServer, stderrOf } from "./support/helpers.js";
import { stopBrowserHost } from "./support/browser-host.js";

const CALLS = Number(process.env.FUZZ_CALLS ?? 10_000);
const IN_FLIGHT = 8;
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

let root: string;
let dataDir: string;
let cwd: string;
let fifo: string | undefined;
let client: Client;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "backchannel-fuzz-"));
  dataDir = join(root, "data");
  cwd = join(root, "cwd");
  await mkdir(cwd);
  try {
    // A named pipe with no writer: opening it for reading would block for ever.
    fifo = join(root, "fifo");
    execFileSync("mkfifo", [fifo]);
  } catch {
    fifo = undefined;
  }
  client = await connectServer(dataDir, {}, { cwd });
});
after(async () => {
  await client.close();
  // The browser host a fuzzed browser_link started, before its folder goes.
  stopBrowserHost({ BACKCHANNEL_HOME: dataDir });
  await rm(root, { recursive: true, force: true });
});

/** mulberry32: a small, seeded PRNG, so a failing run can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const PATH_TRICKS = [
  "../x",
  "../../../../../../etc/passwd",
  "/etc/passwd",
  "/etc/shadow",
  "a/b",
  "..",
  ".",
  "./",
  "~/.ssh/id_rsa",
  "C:\\Windows\\system32\\config",
  "\\\\?\\C:\\x",
  "\\\\server\\share",
  "file:///etc/passwd",
  "%2e%2e%2f%2e%2e%2f",
  "..%00/",
  "a\u0000b",
  "/dev/zero",
  "/dev/urandom",
  "/dev/stdin",
  "/proc/self/fd/0",
  "/proc/self/environ",
  "/proc/self/mem",
  "CON",
  "NUL",
  "aux.json",
  "ui.json",
  "agent.json",
  "channels",
  "state.doc.json",
  "/",
  "/tmp",
  "\u202e/etc/passwd",
];
const SPECIAL_STRINGS = [
  "",
  " ",
  "\t",
  "\r\n",
  "\u0000",
  "\u0007\u001b[31m",
  "\ud800",
  "\uffff",
  "\u202e\u0301\u200b",
  "😀".repeat(40),
  "x".repeat(64),
  "x".repeat(65),
  "ch-" + "a".repeat(61),
  "ch-" + "a".repeat(62),
  "ready",
  "ask",
  "answer",
  "a".repeat(1024),
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template placeholder is the hostile text here
  "${process.exit()}",
  "`rm -rf /`",
  "__proto__",
  "constructor",
  "prototype",
  "null",
  "NaN",
  "-1",
  "1e309",
  "margin-comments",
  "bidirectional-events",
  "fuzz-channel",
  "fuzz_2",
];
const NUMBERS = [-1, 0, 1, 2, 63, 64, 65, 1.5, -0.5, 2 ** 31, 2 ** 50, 2 ** 50 + 1, 2 ** 53 + 2, 1e308, -1e308, 30_001, 300_001];

function randomUnicode(length: number): string {
  let text = "";
  for (let i = 0; i < length; i++) text += String.fromCodePoint(Math.floor(random() * 0x2ffff));
  return text.replace(/[\ud800-\udfff]/g, "?");
}

function hostileString(): string {
  const roll = random();
  if (roll < 0.35) return pick(PATH_TRICKS);
  if (roll < 0.7) return pick(SPECIAL_STRINGS);
  if (roll < 0.9) return randomUnicode(Math.floor(random() * 80));
  if (roll < 0.995) return "y".repeat(70_000); // past the 64 KiB message limit
  return "z".repeat(1_200_000); // past the 1 MiB document limit
}

function deepNesting(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = random() < 0.5 ? [value] : { nested: value };
  return value;
}

function anyValue(depth = 0): unknown {
  const roll = random();
  if (roll < 0.3) return hostileString();
  if (roll < 0.5) return pick(NUMBERS);
  if (roll < 0.55) return pick([true, false, null]);
  // Deeper than about 2,000 levels the client itself cannot serialise a request.
  if (roll < 0.6) return deepNesting(pick([10, 63, 64, 65, 100, 1000, 2000]));
  if (depth > 3) return null;
  if (roll < 0.8) return Array.from({ length: Math.floor(random() * 5) }, () => anyValue(depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [hostileString().slice(0, 40), anyValue(depth + 1)]));
}

interface JsonSchemaProperty {
  type?: string | string[];
}
interface ToolShape {
  name: string;
  properties: Record<string, JsonSchemaProperty>;
  required: string[];
}

/** A value of roughly the schema's type, drawn from the hostile sets. */
function valueFor(name: string, property: JsonSchemaProperty): unknown {
  const type = Array.isArray(property.type) ? pick(property.type) : property.type;
  if (name === "wait_ms") return pick([-1, 0, 1, 20, 300_001, 2 ** 53 + 2, "10", null]); // no long valid waits
  if (name === "channel_id" && random() < 0.4) return pick(["fuzz-channel", "fuzz_2", "x".repeat(64)]);
  if (fifo && name === "path" && random() < 0.05) return fifo;
  if (type === "string") return hostileString();
  if (type === "integer" || type === "number") return pick(NUMBERS);
  if (type === "boolean") return random() < 0.5;
  return anyValue();
}

/** One call's arguments: schema-shaped, then mutated. */
function argumentsFor(tool: ToolShape): unknown {
  const args: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(tool.properties)) {
    if (tool.required.includes(name) || random() < 0.6) args[name] = valueFor(name, property);
  }
  const roll = random();
  if (roll < 0.1 && tool.required.length > 0) delete args[pick(tool.required)];
  else if (roll < 0.2) args[hostileString().slice(0, 30) || "extra"] = anyValue();
  else if (roll < 0.25) Object.assign(args, JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}'));
  else if (roll < 0.4) {
    const names = Object.keys(tool.properties);
    const name = names.length > 0 ? pick(names) : undefined;
    // Any value but a long valid wait, which would only run into the client's own timeout.
    if (name !== undefined) args[name] = name === "wait_ms" ? valueFor(name, {}) : anyValue();
  } else if (roll < 0.42) return pick([[], "string", 42, null]);
  return args;
}

/** The start of `value`'s JSON, for a failure message (a value nested too deep for JSON.stringify is said so). */
function describe(value: unknown): string {
  try {
    return JSON.stringify(value).slice(0, 200);
  } catch {
    return "[nested too deep to print]";
  }
}

/** Every file under `dir`, relative to it. */
async function walk(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    found.push(relative(dataDir, path));
    if (entry.isDirectory()) found.push(...(await walk(path)));
  }
  return found;
}

test(`${CALLS} hostile calls across every tool are all answered, without a crash or a stray file`, { timeout: 600_000 }, async (t) => {
  t.diagnostic(`FUZZ_SEED=${SEED}`);
  const { tools } = await client.listTools();
  const shapes: ToolShape[] = tools.map((tool) => ({
    name: tool.name,
    properties: (tool.inputSchema.properties ?? {}) as Record<string, JsonSchemaProperty>,
    required: (tool.inputSchema.required ?? []) as string[],
  }));
  let closed = false;
  client.onclose = () => (closed = true);

  const counts = { results: 0, errors: 0, protocolErrors: 0 };
  const stackTraces: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < CALLS && !closed) {
      next += 1;
      const tool = pick(shapes);
      const args = argumentsFor(tool);
      try {
        const result = await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> }, { timeout: 30_000 });
        const text = JSON.stringify(result.content ?? "");
        if (/\\n\s+at |at file:\/\/|node:internal/.test(text)) stackTraces.push(`${tool.name}: ${text.slice(0, 300)}`);
        if (result.isError) counts.errors += 1;
        else counts.results += 1;
      } catch (error) {
        // Arguments that are not an object never reach a tool: the SDK answers with a JSON-RPC error.
        const message = (error as Error).message;
        assert.ok(args === null || typeof args !== "object" || Array.isArray(args), `${tool.name} ${describe(args)}: ${message}`);
        counts.protocolErrors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));

  t.diagnostic(
    `calls=${next} results=${counts.results} isError=${counts.errors} protocol-errors=${counts.protocolErrors} tools=${shapes.map((s) => s.name).join(",")}`,
  );
  assert.equal(closed, false, `the server stayed up: ${stderrOf(client).slice(-2000)}`);
  assert.equal(next, CALLS);
  assert.deepEqual(stackTraces, [], "no stack trace reached a caller");
  assert.doesNotMatch(stderrOf(client), /internal error/, "no unexpected exception inside the server");
  const alive = await client.callTool({ name: "notify_ui", arguments: { channel_id: "after-fuzz", event: "e" } });
  assert.equal(alive.isError, undefined);

  // Nothing outside the data directory: the server's working folder and the root stay as they were.
  assert.deepEqual(await readdir(cwd), []);
  assert.deepEqual((await readdir(root)).sort(), ["cwd", "data", ...(fifo ? ["fifo"] : [])].sort());
  for (const path of await walk(dataDir)) {
    const [top, channel, file, ...deeper] = path.split("/");
    if (top === "sessions") {
      // One file per host session (the fuzzed server's), named by its checked key.
      if (channel !== undefined) assert.match(channel.replace(/\.json$/, ""), SESSION_KEY_PATTERN, path);
      assert.equal(file, undefined, path);
      continue;
    }
    if (top === "apps") {
      // One file per saved app (save_app), named by its checked name.
      if (channel !== undefined) {
        assert.ok(channel.endsWith(".json"), path);
        assert.match(channel.slice(0, -".json".length), CHANNEL_ID_PATTERN, path);
      }
      assert.equal(file, undefined, path);
      continue;
    }
    // The space only acknowledgements may use (core/fs/space-reserve.ts), one file.
    if (top === "space.reserve" && channel === undefined) continue;
    if (top === "browser") {
      // The browser host browser_link started (core/browser-host.ts): its key, record, locks and log, for this store only.
      if (channel !== undefined) assert.match(channel, /^(secret|files\.(json|json\.lock|json\.lock\.[0-9a-f]+-\d+\.tmp|start\.lock|log))$/, path);
      assert.equal(file, undefined, path);
      continue;
    }
    assert.equal(top, "channels", path);
    if (channel === undefined) continue;
    assert.match(channel, CHANNEL_ID_PATTERN, `channel folder ${path}`);
    assert.ok((await stat(join(dataDir, "channels", channel))).isDirectory());
    if (file === undefined) continue;
    assert.match(file, /^(ui|agent)\.(json|seq|readers)$|^state\.[a-z][a-z0-9-]*\.json$/, `file ${path}`);
    assert.equal(deeper.length, 0, path);
  }
});
