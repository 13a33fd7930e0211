/**
 * Agent-written apps through real server processes and the SDK's own clients: the
 * model's `open_app` and `save_app` in one process, the shell's app-only `app_state` in
 * another (hosts give the model and the app separate sessions), saved apps as files and
 * as resources, every refusal with what to do, and the model's whole context with the
 * two tools added. The same rules are then checked on the file store itself: names,
 * sizes, damaged files and symbolic links.
 */
import assert from "node:assert/strict";
import { lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { InvalidAppNameError } from "../core/ids.js";
import { APP_HTML_MAX_BYTES, SAVED_APP_MAX_BYTES } from "../core/limits.js";
import { DamagedSavedAppError, SavedAppTooLargeError, type SavedApp } from "../store/saved-app.js";
import { FileStore } from "../store/file/file-store.js";
import { UnsafeAppsFolderError } from "../store/file/saved-apps.js";
import { connectServer, structured, tempDataDir, startServerPair } from "./support/helpers.js";

/** What the model pays in context, as hosts pass it (name, description, inputSchema of every model-visible tool, plus the instructions). */
const CONTEXT_BUDGET_CHARS = 4000;

const POLL = `<p id="q">Vote</p>
<script>
  backchannel.on("poll", (data) => { document.getElementById("q").textContent = data.question; });
</script>`;

interface Opened {
  channel_id: string;
  title: string;
  watch_command: string;
  name?: string;
  description?: string;
}

interface AppState {
  channel_id: string;
  app: { title: string; html: string; name: string | null; opened_at: string } | null;
}

interface Listed {
  apps: { name: string; title: string; description: string; uri: string }[];
}

let dataDir: string;
let agent: Client;
let shell: Client;
let close: () => Promise<void>;
// Two separate server processes, as hosts run them (the model and the app get separate sessions).
before(async () => ({ dataDir, agent, app: shell, close } = await startServerPair()));
after(() => close());

/** The text of an error result; fails when the call succeeded. */
function errorText(result: { isError?: boolean; content?: unknown }): string {
  assert.equal(result.isError, true, `expected an error, got ${JSON.stringify(result.content)}`);
  return (result.content as { text: string }[])[0]!.text;
}

async function openApp(args: Record<string, unknown>) {
  return agent.callTool({ name: "open_app", arguments: args });
}

async function appState(channelId: string): Promise<AppState> {
  return structured<AppState>(await shell.callTool({ name: "app_state", arguments: { channel_id: channelId } }));
}

describe("tools/list and resources", () => {
  test("open_app renders the shell; save_app is the model's; app_state is the app's alone", async () => {
    const { tools } = await agent.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const meta = (name: string) => byName.get(name)?._meta as { ui?: { resourceUri?: string; visibility?: string[] } } | undefined;
    assert.equal(meta("open_app")?.ui?.resourceUri, "ui://backchannel/app.html");
    assert.equal(meta("open_app")?.ui?.visibility, undefined, "the model sees open_app");
    assert.equal(meta("save_app")?.ui, undefined, "the model sees save_app");
    assert.deepEqual(meta("app_state")?.ui?.visibility, ["app"]);
  });

  test("the shell is one self-contained HTML file, served as an MCP App", async () => {
    const { contents } = await shell.readResource({ uri: "ui://backchannel/app.html" });
    const content = contents[0] as { mimeType: string; text: string };
    assert.equal(content.mimeType, RESOURCE_MIME_TYPE);
    assert.match(content.text, /^<!doctype html>/i);
    assert.doesNotMatch(content.text, /<script[^>]+src=|<link[^>]+href=/i, "nothing is fetched: hosts' CSP forbids it");
  });

  /** What each kind of host shows its model: server/client-view.ts's views. */
  const views: { host: string; options: Parameters<typeof connectServer>[2] }[] = [
    { host: "an MCP Apps host", options: {} },
    { host: "a host that shows no apps, with a shell (Claude Code, Codex with mcp add)", options: { capabilities: {} } },
    {
      host: "a host woken by backchannel's hook (the plugin, Codex and Gemini as installed)",
      options: { capabilities: {}, args: ["--wake", "hook"] },
    },
    { host: "a chat page", options: { name: "claude-ai" } },
  ];
  for (const { host, options } of views) {
    test(`the model's whole context in ${host} stays within ${CONTEXT_BUDGET_CHARS} characters`, async (t) => {
      const client = await connectServer(dataDir, {}, options);
      try {
        const { tools } = await client.listTools();
        const visible = tools.filter(
          (tool) => JSON.stringify((tool._meta as { ui?: { visibility?: string[] } } | undefined)?.ui?.visibility) !== '["app"]',
        );
        assert.ok(visible.some((tool) => tool.name === "open_app") && visible.some((tool) => tool.name === "save_app"));
        const lean = visible.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
        // A default installation names no data directory in its watcher command; this test's temporary one is left out.
        const told = (client.getInstructions() ?? "").replaceAll(` --home ${dataDir}`, "");
        const chars = JSON.stringify(lean).length + told.length;
        t.diagnostic(`context: ${chars} characters (${visible.map((tool) => tool.name).join(", ")} and the instructions)`);
        assert.ok(chars <= CONTEXT_BUDGET_CHARS, `${chars} characters`);
      } finally {
        await client.close();
      }
    });
  }
});

describe("open_app", () => {
  test("stores the fragment on a new channel; the shell, in another process, fetches it; the model gets no HTML back", async () => {
    const result = await openApp({ title: "Quick poll", html: POLL });
    const opened = structured<Opened>(result);
    assert.match(opened.channel_id, /^ch-[0-9a-z]+-[0-9a-f]{20}$/);
    assert.equal(opened.title, "Quick poll");
    assert.match(opened.watch_command, new RegExp(` watch ${opened.channel_id} --home \\S+$`));
    assert.doesNotMatch(JSON.stringify(result), /backchannel\.on/, "the HTML does not travel back to the model");
    const state = await appState(opened.channel_id);
    assert.equal(state.app?.html, POLL);
    assert.equal(state.app?.title, "Quick poll");
    assert.equal(state.app?.name, null);
  });

  test("a channel the agent chooses; without a title the app is called App", async () => {
    const opened = structured<Opened>(await openApp({ html: "<p>hi</p>", channel_id: "my-app" }));
    assert.equal(opened.channel_id, "my-app");
    assert.equal(opened.title, "App");
    assert.equal((await appState("my-app")).app?.html, "<p>hi</p>");
  });

  test(`a fragment over ${APP_HTML_MAX_BYTES / 1024} KiB is refused with the limit and what to do; nothing is stored`, async () => {
    const html = `<p>${"x".repeat(APP_HTML_MAX_BYTES)}</p>`;
    const text = errorText(await openApp({ html, channel_id: "too-big" }));
    assert.match(
      text,
      new RegExp(`html is ${Buffer.byteLength(html)} bytes, the limit is ${APP_HTML_MAX_BYTES} \\(256 KiB\\): make the app smaller`),
    );
    assert.equal((await appState("too-big")).app, null);
  });

  test("the exact limit is accepted (bytes of UTF-8, not characters)", async () => {
    const html = "é".repeat(APP_HTML_MAX_BYTES / 2);
    assert.equal(structured<Opened>(await openApp({ html, channel_id: "at-limit" })).channel_id, "at-limit");
    assert.match(errorText(await openApp({ html: `${html}é`, channel_id: "at-limit" })), /the limit is 262144/);
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ["html and name both", { html: "<p>a</p>", name: "quick-poll" }, /pass html \(a new app\) or name \(a saved app\), not both/],
    ["blank html", { html: "  \n " }, /html is empty/],
    ["a title over 200 characters", { html: "<p>a</p>", title: "t".repeat(201) }, /title is 201 characters, the limit is 200/],
    ["a bad channel id", { html: "<p>a</p>", channel_id: "../etc" }, /invalid channel id "\.\.\/etc"/],
    ["a bad app name", { name: "../../x" }, /invalid app name "\.\.\/\.\.\/x".*e\.g\. quick-poll/],
    ["an unknown app name", { name: "nope" }, /no saved app named "nope"/],
  ];
  for (const [what, args, message] of refusals) {
    test(`refuses ${what}, saying what to do`, async () => {
      assert.match(errorText(await openApp(args)), message);
    });
  }

  test("app_state of a channel without an app is null, and harmless for a model that calls it", async () => {
    assert.deepEqual(await appState("no-app-here"), { channel_id: "no-app-here", app: null, browser_tab: true });
  });
});

describe("save_app and saved apps", () => {
  let channelId: string;
  before(async () => {
    channelId = structured<Opened>(await openApp({ title: "Quick poll", html: POLL })).channel_id;
  });

  test("without saved apps, open_app with neither html nor name says how to make one", async () => {
    const result = await openApp({});
    assert.deepEqual(structured<Listed>(result).apps, []);
    assert.match((result.content as { text: string }[])[0]!.text, /No saved apps yet/);
  });

  test("keeps the channel's app as apps/<name>.json (0600, in a 0700 folder)", async () => {
    const description = "A poll. After ready send poll {question}.";
    const saved = structured<{ name: string; uri: string; replaced: boolean }>(
      await agent.callTool({ name: "save_app", arguments: { channel_id: channelId, name: "quick-poll", description } }),
    );
    assert.deepEqual(saved, { name: "quick-poll", uri: "backchannel://apps/quick-poll", replaced: false });
    const file = join(dataDir, "apps", "quick-poll.json");
    const stored = JSON.parse(await readFile(file, "utf8")) as SavedApp;
    assert.deepEqual({ ...stored, saved_at: "" }, { name: "quick-poll", title: "Quick poll", description, html: POLL, saved_at: "" });
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(join(dataDir, "apps"))).mode & 0o777, 0o700);
  });

  test("open_app {name} opens it again on a fresh channel, with the note in its result", async () => {
    const result = await openApp({ name: "quick-poll" });
    const opened = structured<Opened>(result);
    assert.notEqual(opened.channel_id, channelId);
    assert.equal(opened.name, "quick-poll");
    assert.equal(opened.description, "A poll. After ready send poll {question}.");
    assert.equal(opened.title, "Quick poll");
    assert.match((result.content as { text: string }[])[0]!.text, /its note: A poll\. After ready send poll \{question\}\./);
    const state = await appState(opened.channel_id);
    assert.equal(state.app?.html, POLL);
    assert.equal(state.app?.name, "quick-poll");
    assert.equal(structured<Opened>(await openApp({ name: "quick-poll", title: "Friday poll" })).title, "Friday poll", "a title of its own");
  });

  test("saving under the same name again replaces it, and says so", async () => {
    const other = structured<Opened>(await openApp({ title: "Poll v2", html: `${POLL}<p>v2</p>` })).channel_id;
    const saved = structured<{ replaced: boolean }>(
      await agent.callTool({ name: "save_app", arguments: { channel_id: other, name: "quick-poll", description: "The second poll." } }),
    );
    assert.equal(saved.replaced, true);
    assert.equal((await appState(structured<Opened>(await openApp({ name: "quick-poll" })).channel_id)).app?.title, "Poll v2");
  });

  test("open_app with neither html nor name lists the saved apps, as the resources do", async () => {
    await agent.callTool({ name: "save_app", arguments: { channel_id: channelId, name: "another_one", description: "Another." } });
    const listed = structured<Listed>(await openApp({}));
    assert.deepEqual(listed.apps, [
      { name: "another_one", title: "Quick poll", description: "Another.", uri: "backchannel://apps/another_one" },
      { name: "quick-poll", title: "Poll v2", description: "The second poll.", uri: "backchannel://apps/quick-poll" },
    ]);
    const { resources } = await agent.listResources();
    const apps = resources.filter((resource) => resource.uri.startsWith("backchannel://apps/"));
    assert.deepEqual(
      apps.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType })),
      listed.apps.map(({ uri, name, description }) => ({ uri, name, description, mimeType: "application/json" })),
    );
    const { contents } = await agent.readResource({ uri: "backchannel://apps/another_one" });
    assert.equal((JSON.parse((contents[0] as { text: string }).text) as SavedApp).html, POLL);
    await assert.rejects(
      agent.readResource({ uri: "backchannel://apps/nope" }),
      /no saved app named "nope"; the saved apps are: another_one, quick-poll/,
    );
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ["a channel without an app", { channel_id: "never-opened", name: "x", description: "d" }, /channel never-opened has no app to save/],
    ["a bad name", { name: "a/b", description: "d" }, /invalid app name "a\/b"/],
    ["a name of 65 characters", { name: "n".repeat(65), description: "d" }, /invalid app name .*\(65 characters\)/],
    ["an empty description", { name: "x", description: " " }, /description is empty: say what the app does/],
    ["a description over 1,000 characters", { name: "x", description: "d".repeat(1001) }, /description is 1001 characters, the limit is 1000/],
  ];
  for (const [what, args, message] of refusals) {
    test(`save_app refuses ${what}, saying what to do`, async () => {
      assert.match(errorText(await agent.callTool({ name: "save_app", arguments: { channel_id: channelId, ...args } })), message);
    });
  }
});

describe("saved apps in the file store", () => {
  let dir: string;
  let removeDir: () => Promise<void>;
  let store: FileStore;
  const warnings: string[] = [];
  const app = (name: string, html = "<p>app</p>"): SavedApp => ({ name, title: "T", description: "D", html, saved_at: new Date().toISOString() });
  before(async () => {
    ({ dir, cleanup: removeDir } = await tempDataDir());
    store = new FileStore({ dataDir: dir, warn: (message) => warnings.push(message) });
  });
  after(() => removeDir());

  // Writing, reading, listing and removing are the store contract's (test/store-contract.test.ts), over every store.
  test("a name is checked before any path is built from it", async () => {
    for (const name of ["", "..", "../x", "a/b", "a b", "x".repeat(65), "é"]) {
      await assert.rejects(store.apps.read(name), InvalidAppNameError, JSON.stringify(name));
      await assert.rejects(store.apps.write(app(name)), InvalidAppNameError, JSON.stringify(name));
      await assert.rejects(store.apps.remove(name), InvalidAppNameError, JSON.stringify(name));
    }
  });

  test(`an app over ${SAVED_APP_MAX_BYTES} bytes of JSON is refused; the one saved before stays`, async () => {
    await store.apps.write(app("big", "<p>small</p>"));
    // Every quote takes two bytes in JSON: the largest fragment open_app takes still fits.
    await store.apps.write(app("big", '"'.repeat(APP_HTML_MAX_BYTES)));
    await assert.rejects(store.apps.write(app("big", "x".repeat(SAVED_APP_MAX_BYTES))), SavedAppTooLargeError);
    assert.equal((await store.apps.read("big"))?.html.length, APP_HTML_MAX_BYTES);
  });

  test("a damaged file is an error that says what to do when read, and is left out (and reported) when listing", async () => {
    await writeFile(join(dir, "apps", "damaged.json"), "{not json", { mode: 0o600 });
    await writeFile(join(dir, "apps", "renamed.json"), JSON.stringify(app("other")), { mode: 0o600 });
    await assert.rejects(store.apps.read("damaged"), /the saved app damaged cannot be read \(it is not JSON\); open the app again/);
    await assert.rejects(store.apps.read("renamed"), DamagedSavedAppError);
    warnings.length = 0;
    assert.ok(!(await store.apps.summaries(await store.apps.names())).some((saved) => saved.name === "damaged" || saved.name === "renamed"));
    assert.equal(warnings.length, 2, warnings.join("\n"));
    await store.apps.write(app("damaged"));
    assert.equal((await store.apps.read("damaged"))?.name, "damaged", "a save replaces a damaged file");
  });

  test("a saved app written by hand with its HTML first is listed from the whole file", async () => {
    const { name, title, description, html, saved_at } = app("handmade", "<p>first</p>");
    await writeFile(join(dir, "apps", "handmade.json"), JSON.stringify({ html, name, title, description, saved_at }, null, 1), { mode: 0o600 });
    assert.deepEqual(await store.apps.summaries(["handmade"]), [{ name, title, description }]);
  });

  test("a symbolic link is never read or written through: a link in place of an app is replaced, not followed", async () => {
    const outside = join(dir, "outside.json");
    await writeFile(outside, JSON.stringify(app("linked")));
    await symlink(outside, join(dir, "apps", "linked.json"));
    await assert.rejects(store.apps.read("linked"), /the saved app linked cannot be read \(it is a symbolic link\)/);
    await store.apps.write(app("linked", "<p>mine</p>"));
    assert.equal((await lstat(join(dir, "apps", "linked.json"))).isFile(), true, "the link was replaced by a file");
    assert.equal((JSON.parse(await readFile(outside, "utf8")) as SavedApp).html, "<p>app</p>", "the link's target is untouched");
    await symlink(outside, join(dir, "apps", "gone.json"));
    assert.equal(await store.apps.remove("gone"), true);
    assert.equal((JSON.parse(await readFile(outside, "utf8")) as SavedApp).name, "linked", "removing a link leaves its target");
  });

  test("an apps folder that is a symbolic link is refused for writing, with what to do", async () => {
    const { dir: other, cleanup: removeOther } = await tempDataDir();
    try {
      const target = join(other, "elsewhere");
      await mkdir(target);
      await symlink(target, join(other, "apps"));
      const linked = new FileStore({ dataDir: other });
      await assert.rejects(linked.apps.write(app("x")), UnsafeAppsFolderError);
      await assert.rejects(
        linked.apps.write(app("x")),
        /apps is a symbolic link: backchannel keeps saved apps only in a real folder there; move it away/,
      );
      assert.equal(await readlink(join(other, "apps")), target);
      await assert.rejects(stat(join(target, "x.json")), { code: "ENOENT" }, "nothing was written through the link");
    } finally {
      await removeOther();
    }
  });
});
