/**
 * Where this installation's own files are. Every module finds the package's files
 * through here, so the layout of `dist/` is written down once (docs/ARCHITECTURE.md):
 *
 *     <root>/package.json
 *     <root>/recipes/<name>.md
 *     <root>/dist/cli/main.js        the `backchannel` command (bin)
 *     <root>/dist/server/cli.js      the same, at the path users' host configs name
 *     <root>/dist/app/<name>.html    the apps, one self-contained file each
 *
 * This module is compiled to `<root>/dist/core/package.js`.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The package's root folder (the one holding package.json), with a trailing separator. */
export const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The `backchannel` command's entry point. */
export const CLI_ENTRY = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/** The folder of the recipes. */
export const RECIPES_DIR = fileURLToPath(new URL("../../recipes/", import.meta.url));

/** The built app `name` (`reader`, …): one HTML file with everything inlined. */
export function appHtmlPath(name: string): string {
  return fileURLToPath(new URL(`../app/${name}.html`, import.meta.url));
}

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { name: string; version: string };

/** The package version, e.g. `0.1.0`. */
export const VERSION: string = manifest.version;

/** The package name, `backchannel`. */
export const NAME: string = manifest.name;
