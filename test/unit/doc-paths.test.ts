/**
 * The docs-paths check (scripts/doc-paths.mjs, run by `npm run lint`): every repository
 * path the docs name exists, and examples are not taken for paths.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

type DocPaths = typeof import("../../scripts/doc-paths.mjs");
// The check runs from source (no build before lint): this file runs from dist/test/unit/.
const repository = fileURLToPath(new URL("../../../", import.meta.url));
const { missingPaths, namedPaths } = (await import(new URL("scripts/doc-paths.mjs", `file://${repository}`).href)) as DocPaths;

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "doc-paths-"));
  await mkdir(join(root, "store", "file"), { recursive: true });
  await mkdir(join(root, "docs"));
  await writeFile(join(root, "store", "file", "queue-log.ts"), "");
  await writeFile(join(root, "store", "open.ts"), "");
  await writeFile(join(root, "SECURITY.md"), "");
});
after(() => rm(root, { recursive: true, force: true }));

describe("the docs-paths check", () => {
  test("names each path that is gone, with its document and line", async () => {
    const doc = [
      "The store is `store/open.ts`; a queue is `queue-log.ts`, see [security](../SECURITY.md).",
      "| `safe-read.ts` | gone |",
      "`store/file/lock.ts` and `dist/store/open.js` and [old](old.md)",
      '<picture><source srcset="../SECURITY.md" media="(prefers-color-scheme: dark)"><img src="gone.png" alt=""></picture>',
    ].join("\n");
    await writeFile(join(root, "docs", "ARCHITECTURE.md"), doc);
    assert.deepEqual(missingPaths(root, ["docs"]), [
      "docs/ARCHITECTURE.md:2: safe-read.ts",
      "docs/ARCHITECTURE.md:3: store/file/lock.ts",
      "docs/ARCHITECTURE.md:3: old.md",
      "docs/ARCHITECTURE.md:4: gone.png",
    ]);
  });

  test("takes examples, placeholders, package names, URLs and fenced code for what they are", () => {
    const doc = [
      "`channels/<channel id>/ui.json`, `store/*.ts`, `backchannel-mcp/app`, `@redis/client`, `~/.claude/settings.json`",
      "`https://example.com/store/x.ts`, `settings.json`, `npm run lint`, [site](https://example.com/a.md)",
      "```",
      "store/gone.ts `store/gone.ts`",
      "```",
    ].join("\n");
    assert.deepEqual(namedPaths(doc, new Set(["store", "docs"])), []);
  });

  test("the repository's own docs name no path that is gone", () => {
    assert.deepEqual(missingPaths(repository), []);
  });
});
