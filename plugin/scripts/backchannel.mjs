#!/usr/bin/env node
/**
 * The `backchannel` command of the Claude Code plugin: every command of the plugin
 * (its MCP server, its wake hook) runs through here, so that it needs nothing outside
 * the plugin folder.
 *
 * - Shipped inside backchannel (a checkout, with `claude --plugin-dir <checkout>/plugin`,
 *   or the npm package, which holds plugin/ beside dist/): runs that package's own
 *   built command, in this process, with no network.
 * - Copied alone into Claude Code's plugin cache (a marketplace install): runs the
 *   published package of the plugin's own version through npx.
 *
 * Its exit code is the command's: the wake hook's 2 must reach Claude Code unchanged.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The npm package the plugin ships in. */
const PACKAGE_NAME = "backchannel-mcp";

const packageMain = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** Whether this plugin folder sits in the backchannel package, next to its build. */
function insidePackage() {
  try {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    return manifest.name === PACKAGE_NAME && existsSync(packageMain);
  } catch {
    return false;
  }
}

if (insidePackage()) {
  // The package's command reads process.argv.slice(2): the same words as ours.
  await import(pathToFileURL(packageMain).href);
} else {
  const { version } = JSON.parse(readFileSync(new URL("../.claude-plugin/plugin.json", import.meta.url), "utf8"));
  const npx = process.platform === "win32" ? "npx.cmd" : "npx";
  const child = spawn(npx, ["--yes", "--package", `${PACKAGE_NAME}@${version}`, "backchannel", ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    process.stderr.write(`backchannel plugin: cannot run npx (${error.message}); install backchannel-mcp or use the plugin from a checkout\n`);
    process.exit(1);
  });
  child.on("exit", (code) => process.exit(code ?? 1));
}
