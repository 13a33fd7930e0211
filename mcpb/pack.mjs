#!/usr/bin/env node
/**
 * `npm run pack:mcpb [-- <out.mcpb>]`: builds the MCP Bundle for Claude Desktop
 * (default `dist/backchannel.mcpb`) from the built tree (run `npm run build` first).
 *
 * The bundle holds exactly what the npm package holds (`npm pack`, so the `files` list
 * of package.json is the one definition of what ships), the manifest beside this file
 * with the package's version, and the production dependencies as package-lock.json
 * pins them (`npm ci --omit=dev`, from the local cache when it has them). No script of
 * any package runs.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = resolve(process.argv[2] ?? join(root, "dist", "backchannel.mcpb"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (command, args, cwd) => execFileSync(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"], shell: process.platform === "win32" });

const work = mkdtempSync(join(tmpdir(), "backchannel-mcpb-"));
try {
  // 1. What npm would publish, unpacked.
  run(npm, ["pack", "--ignore-scripts", "--loglevel=warn", "--pack-destination", work], root);
  const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack left no tarball in ${work}`);
  const stage = join(work, "stage");
  mkdirSync(stage);
  run("tar", ["-xzf", join(work, tarball), "-C", stage, "--strip-components=1"], root);

  // 2. The manifest, with this version.
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const manifest = JSON.parse(readFileSync(join(root, "mcpb", "manifest.json"), "utf8"));
  writeFileSync(join(stage, "manifest.json"), `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);

  // 3. The production dependencies, as locked.
  copyFileSync(join(root, "package-lock.json"), join(stage, "package-lock.json"));
  run(npm, ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=warn"], stage);
  rmSync(join(stage, "package-lock.json"));

  // 4. The bundle.
  mkdirSync(dirname(out), { recursive: true });
  run(process.execPath, [join(root, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js"), "pack", stage, out], root);
  process.stdout.write(`backchannel: MCP Bundle ${out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
