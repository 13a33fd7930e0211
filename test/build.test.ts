/**
 * The build before `npm start` and `npm test` (scripts/build-if-stale.mjs) runs only when
 * a file changed since the last build, and always when there is no build. The script runs
 * for real in a folder laid out as a checkout; `npm` is a stand-in on PATH that records
 * what it was asked (a real build takes a minute, and is not what is tested here).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmod, copyFile, mkdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { tempDataDir } from "./support/helpers.js";

const SCRIPT = fileURLToPath(new URL("../../scripts/build-if-stale.mjs", import.meta.url));

test("builds when never built or a file changed since, and not when nothing did", async () => {
  const { dir, cleanup } = await tempDataDir();
  try {
    const checkout = join(dir, "checkout");
    await mkdir(join(checkout, "scripts"), { recursive: true });
    await mkdir(join(checkout, "core"));
    await copyFile(SCRIPT, join(checkout, "scripts", "build-if-stale.mjs"));
    await writeFile(join(checkout, "core", "ids.ts"), "export {};\n");
    // The stand-in npm records its arguments, and leaves the stamp as the real build does.
    const bin = join(dir, "bin");
    await mkdir(bin);
    const calls = join(dir, "npm-calls");
    await writeFile(join(bin, "npm"), `#!/bin/sh\necho "$@" >> "${calls}"\nexec "${process.execPath}" scripts/build-if-stale.mjs --stamp\n`);
    await chmod(join(bin, "npm"), 0o755);
    const run = () => {
      const result = spawnSync(process.execPath, ["scripts/build-if-stale.mjs"], {
        cwd: checkout,
        encoding: "utf8",
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      assert.equal(result.status, 0, result.stderr);
      return result.stderr;
    };
    const builds = async () => (await readFile(calls, "utf8").catch(() => "")).split("\n").filter((line) => line === "run build").length;

    assert.match(run(), /no build yet; building/);
    assert.equal(await builds(), 1);
    assert.match(run(), /current/);
    assert.equal(await builds(), 1, "nothing changed: no build");
    const later = new Date(Date.now() + 5000);
    await utimes(join(checkout, "core", "ids.ts"), later, later);
    assert.match(run(), /core\/ids\.ts changed since the last build; building/);
    assert.equal(await builds(), 2);
  } finally {
    await cleanup();
  }
});
