/**
 * `backchannel install codex` and `backchannel uninstall codex`: the one step that makes
 * backchannel part of Codex CLI with the agent reachable all session (docs/hosts.md,
 * "Codex CLI"):
 *
 * 1. the wake hook, `backchannel hook codex-stop`, as a `Stop` hook in
 *    `$CODEX_HOME/hooks.json` (written under that file's lock, atomically, every other
 *    hook kept: claude-code/install-hook.ts);
 * 2. Codex's trust in that hook (`hooks.state."<key>".trusted_hash` in config.toml, the
 *    hash Codex itself reports): Codex runs no hook it does not trust;
 * 3. the MCP server, `[mcp_servers.backchannel]`, unless one by that name is there already
 *    (a user's own entry, with its own env, is never replaced).
 *
 * config.toml is edited only through Codex's own app server (./app-server.ts), which
 * keeps the user's comments and layout. Order of writes: the hook first, its trust
 * next, so that a crash between them leaves a hook Codex skips (and says so), never one
 * that runs unasked. Uninstall takes out what install added, and only that: a server
 * entry the user changed since is left alone, and said so.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { backchannelCommand, shellWords } from "../core/commands.js";
import { homeFolder, NoHomeFolderError, resolveDataDir } from "../core/paths.js";
import { type Outcome, withSettingsLock } from "../claude-code/install.js";
import { withHookEntry, withoutHookEntry } from "../claude-code/install-hook.js";
import { type JsonObject, readJsonObject, writeJsonObject } from "../claude-code/settings-file.js";
import { AppServerError, type AppServer, openAppServer } from "./app-server.js";

/** The name backchannel's MCP server gets in Codex (tools are `mcp__backchannel`'s). */
export const CODEX_SERVER_NAME = "backchannel";

/** The wake hook's command, whichever prefix runs it. */
const OUR_HOOK = /(^|\s)hook\s+codex-stop(\s|$)/;

/** Seconds Codex gives the Stop hook: it only starts the waker and returns. */
const STOP_HOOK_TIMEOUT_S = 30;

/** The variables the MCP server must share with the hook: Codex starts MCP servers with a filtered environment. */
const SHARED_VARIABLES = ["BACKCHANNEL_STORE"] as const;

/** Options of {@link installCodex} and {@link uninstallCodex}. */
export interface CodexInstallOptions {
  /** Codex's configuration folder: `$CODEX_HOME`, else `~/.codex`. */
  codexHome: string;
  /** The words that run Codex, e.g. `["codex"]`. */
  codex: readonly string[];
  /** The environment: what `backchannel` is (`BACKCHANNEL_COMMAND`), where its data lives, and Codex's. Default this process's. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Codex's configuration folder for `env`: `$CODEX_HOME`, else `~/.codex`.
 * @throws NoHomeFolderError when neither names a folder.
 */
export function defaultCodexHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CODEX_HOME) return env.CODEX_HOME;
  const home = homeFolder();
  if (home === undefined) throw new NoHomeFolderError("Codex's folder", "pass --codex-home DIR, or set CODEX_HOME");
  return join(home, ".codex");
}

/**
 * Installs the wake hook, trusts it, and adds the MCP server (see the module's comment).
 * Installing again changes nothing.
 * @returns ok with what was done; not ok (nothing more changed) when Codex cannot be run
 *   or refuses an edit, with what to do.
 * @throws SettingsFileError when hooks.json is not a hooks file (nothing is written);
 *   LockTimeoutError; I/O errors.
 */
export async function installCodex(options: CodexInstallOptions): Promise<Outcome> {
  const env = options.env ?? process.env;
  const hooksPath = join(options.codexHome, "hooks.json");
  mkdirSync(options.codexHome, { recursive: true });
  const done: string[] = [];
  const hook: JsonObject = { type: "command", command: `${backchannelCommand(env)} hook codex-stop`, timeout: STOP_HOOK_TIMEOUT_S };
  const added = await withSettingsLock(hooksPath, () => {
    const next = withHookEntry(hooksPath, readJsonObject(hooksPath) ?? {}, "Stop", hook, OUR_HOOK);
    if (next !== undefined) writeJsonObject(hooksPath, next);
    return next !== undefined;
  });
  done.push(added ? `added the wake hook to ${hooksPath}` : `the wake hook was in ${hooksPath} already`);
  return withAppServer(options, env, done, async (codex) => {
    const trusted = await trustOurHooks(codex, options.codexHome, hooksPath);
    done.push(trusted > 0 ? "Codex now trusts it" : "Codex trusted it already");
    const server = (await mcpServers(codex))[CODEX_SERVER_NAME];
    if (server === undefined) {
      await codex.request("config/value/write", { keyPath: serverKeyPath(), value: serverEntry(env), mergeStrategy: "replace" });
      done.push(`added the MCP server "${CODEX_SERVER_NAME}"`);
    } else if (sameJson(server, serverEntry(env))) done.push(`the MCP server "${CODEX_SERVER_NAME}" was there already`);
    else done.push(`kept the MCP server "${CODEX_SERVER_NAME}" you had (it is not the entry install writes)`);
    return {
      ok: true,
      message:
        `backchannel is installed in Codex (${options.codexHome}): ${done.join("; ")}.\n` +
        "Sessions started from now on can open the reader, and an app's message wakes the agent (no watcher to arm).",
    };
  });
}

/**
 * Takes out what {@link installCodex} added: the hook (and Codex's trust in it), and the
 * MCP server entry when it is still the one install writes.
 * @returns as {@link installCodex}.
 * @throws as {@link installCodex}.
 */
export async function uninstallCodex(options: CodexInstallOptions): Promise<Outcome> {
  const env = options.env ?? process.env;
  const hooksPath = join(options.codexHome, "hooks.json");
  if (!existsSync(options.codexHome)) return { ok: true, message: `There is no Codex configuration in ${options.codexHome}; nothing changed.` };
  const done: string[] = [];
  return withAppServer(options, env, done, async (codex) => {
    // The trust first (its key names the hook's place in hooks.json), then the hook.
    const keys = (await ourHooks(codex, options.codexHome, hooksPath)).map((hook) => hook.key);
    for (const key of keys)
      await codex.request("config/value/write", { keyPath: `hooks.state.${JSON.stringify(key)}`, value: null, mergeStrategy: "replace" });
    const removed = await withSettingsLock(hooksPath, () => {
      const settings = readJsonObject(hooksPath);
      const next = settings === null ? undefined : withoutHookEntry(hooksPath, settings, "Stop", OUR_HOOK);
      if (next !== undefined) writeJsonObject(hooksPath, next);
      return next !== undefined;
    });
    done.push(removed ? `removed the wake hook from ${hooksPath}` : `the wake hook was not in ${hooksPath}`);
    const server = (await mcpServers(codex))[CODEX_SERVER_NAME];
    if (server === undefined) done.push(`there was no MCP server "${CODEX_SERVER_NAME}"`);
    else if (sameJson(server, serverEntry(env))) {
      await codex.request("config/value/write", { keyPath: serverKeyPath(), value: null, mergeStrategy: "replace" });
      done.push(`removed the MCP server "${CODEX_SERVER_NAME}"`);
    } else
      done.push(
        `left the MCP server "${CODEX_SERVER_NAME}" alone: it is not the entry install writes (remove it with codex mcp remove ${CODEX_SERVER_NAME})`,
      );
    return { ok: true, message: `backchannel is uninstalled from Codex (${options.codexHome}): ${done.join("; ")}.` };
  });
}

/** A hook as Codex's `hooks/list` describes it (the fields used here). */
interface ListedHook {
  key: string;
  command?: string;
  sourcePath?: string;
  currentHash: string;
  trustStatus: "managed" | "untrusted" | "trusted" | "modified";
}

/** Runs `action` with Codex's app server for `options`, turning Codex's failures into a refusal that says what was done before. */
async function withAppServer(
  options: CodexInstallOptions,
  env: NodeJS.ProcessEnv,
  done: string[],
  action: (codex: AppServer) => Promise<Outcome>,
): Promise<Outcome> {
  let codex: AppServer | undefined;
  try {
    codex = await openAppServer(options.codex, { ...env, CODEX_HOME: options.codexHome });
    return await action(codex);
  } catch (error) {
    if (!(error instanceof AppServerError)) throw error;
    const before = done.length > 0 ? ` Done before that: ${done.join("; ")}.` : "";
    return { ok: false, message: `${error.message}.${before} Run the command again once Codex runs (codex --version).` };
  } finally {
    await codex?.close();
  }
}

/** Trusts every hook of ours in `hooksPath` that Codex does not trust yet; how many it trusted. */
async function trustOurHooks(codex: AppServer, cwd: string, hooksPath: string): Promise<number> {
  let trusted = 0;
  for (const hook of await ourHooks(codex, cwd, hooksPath)) {
    if (hook.trustStatus === "trusted" || hook.trustStatus === "managed") continue;
    await codex.request("config/value/write", {
      keyPath: `hooks.state.${JSON.stringify(hook.key)}.trusted_hash`,
      value: hook.currentHash,
      mergeStrategy: "replace",
    });
    trusted += 1;
  }
  return trusted;
}

/** The hooks of ours that Codex finds in `hooksPath`. */
async function ourHooks(codex: AppServer, cwd: string, hooksPath: string): Promise<ListedHook[]> {
  const listed = await codex.request<{ data?: { hooks?: ListedHook[] }[] }>("hooks/list", { cwds: [cwd] });
  return (listed.data ?? [])
    .flatMap((entry) => entry.hooks ?? [])
    .filter((hook) => hook.sourcePath === hooksPath && typeof hook.command === "string" && OUR_HOOK.test(hook.command));
}

/** The MCP servers of the user's config.toml, by name. */
async function mcpServers(codex: AppServer): Promise<Record<string, unknown>> {
  const read = await codex.request<{ config?: { mcp_servers?: Record<string, unknown> | null } }>("config/read", {});
  return read.config?.mcp_servers ?? {};
}

/** The key path of backchannel's server entry in config.toml. */
function serverKeyPath(): string {
  return `mcp_servers.${CODEX_SERVER_NAME}`;
}

/**
 * The server entry install writes: this installation's command, and the data directory
 * (and store) when the environment chooses one, since Codex passes MCP servers only a
 * few of its variables while the hook sees them all.
 */
function serverEntry(env: NodeJS.ProcessEnv): JsonObject {
  const [command, ...args] = shellWords(backchannelCommand(env));
  // `--wake hook`: the model is told that the wake hook wakes it, never to arm a watcher.
  const entry: JsonObject = { command: command!, args: [...args, "serve", "--wake", "hook"] };
  const shared: JsonObject = {};
  if (env.BACKCHANNEL_HOME || env.XDG_STATE_HOME) shared.BACKCHANNEL_HOME = resolveDataDir(env);
  for (const name of SHARED_VARIABLES) if (env[name]) shared[name] = env[name]!;
  if (Object.keys(shared).length > 0) entry.env = shared;
  return entry;
}

/** Whether Codex's reading of a server entry holds what `entry` says (Codex adds defaults of its own). */
function sameJson(read: unknown, entry: JsonObject): boolean {
  if (typeof read !== "object" || read === null) return false;
  const fields = read as Record<string, unknown>;
  return Object.entries(entry).every(([key, value]) => JSON.stringify(fields[key] ?? null) === JSON.stringify(value));
}
