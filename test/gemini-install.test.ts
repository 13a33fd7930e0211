/**
 * The Gemini CLI extension (gemini-extension/) as a user installs it, with the real
 * Gemini CLI's own commands: `gemini extensions link … --consent` installs it in one step
 * (the MCP server and the wake hook), linking it again changes nothing, `gemini
 * extensions uninstall backchannel` takes it out, and the user's settings.json is never
 * touched.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type GeminiModel, startGeminiModel } from "./support/gemini/model-server.js";
import { EXTENSION_ROOT, type GeminiHome, geminiSkipReason, prepareGemini } from "./support/gemini/session.js";
import { tempDataDir } from "./support/helpers.js";

const skip = geminiSkipReason();

describe("the Gemini CLI extension, linked and unlinked by Gemini CLI", { skip }, () => {
  let model: GeminiModel;
  let prepared: GeminiHome;
  let data: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    data = await tempDataDir();
    model = await startGeminiModel(() => undefined);
    prepared = await prepareGemini({ model, dataDir: data.dir, install: false });
  });
  after(async () => {
    await prepared?.cleanup();
    await model?.close();
    await data?.cleanup();
  });

  const gemini = (...args: string[]) => {
    const result = spawnSync("gemini", args, { cwd: prepared.cwd, env: prepared.env, encoding: "utf8", timeout: 120_000 });
    return { code: result.status, output: `${result.stdout}${result.stderr}` };
  };

  test("link installs it once, with its server (its hook: gemini-host.test.ts); again changes nothing; uninstall takes it out; settings.json untouched", {
    timeout: 240_000,
  }, async () => {
    const settingsPath = join(prepared.home, ".gemini", "settings.json");
    const settings = `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, ui: { theme: "mine" } }, null, 2)}\n`;
    await writeFile(settingsPath, settings);
    const linked = gemini("extensions", "link", EXTENSION_ROOT, "--consent");
    assert.equal(linked.code, 0, linked.output);
    assert.match(linked.output, /Extension "backchannel" linked successfully and enabled/);
    const listed = gemini("extensions", "list");
    assert.match(listed.output, /backchannel/);
    assert.match(listed.output, /MCP servers:[\s\S]*backchannel/, `the server comes with it:\n${listed.output}`);
    const again = gemini("extensions", "link", EXTENSION_ROOT, "--consent");
    assert.match(again.output, /already installed/, again.output);
    assert.equal(again.code, 1, "Gemini CLI refuses a second link (exit 1) and changes nothing");
    assert.equal(gemini("extensions", "list").output, listed.output, "linking again changes nothing");
    const removed = gemini("extensions", "uninstall", "backchannel");
    assert.equal(removed.code, 0, removed.output);
    assert.doesNotMatch(gemini("extensions", "list").output, /backchannel/);
    assert.equal(await readFile(settingsPath, "utf8"), settings, "the user's settings.json is as it was");
  });
});
