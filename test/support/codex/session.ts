/**
 * The real Codex CLI (pinned, installed by `npm run hosts:install`) against the scripted
 * model (model-server.ts), with a fresh HOME, `CODEX_HOME` and working folder and no
 * network: a custom model provider (`wire_api = "responses"`, `base_url` at the scripted
 * model) in config.toml, and backchannel installed as the README tells a user,
 * `backchannel install codex` with `codex` on the PATH (or only its server, `codex mcp add`).
 *
 * The session is the interactive TUI in a tmux pane (../tmux-pane.ts): it starts Codex's
 * app-server daemon, which runs the threads, their MCP servers and hooks. The daemon
 * copies its 424 MB package into `$CODEX_HOME/packages` on its first start; the harness
 * lays that copy out beforehand as hard links to the pinned install (no disk used; a
 * plain copy is left to the daemon where links cannot be made), and removes it with the
 * HOME. Teardown stops the daemon and ends every process still marked with the HOME.
 */
import { spawnSync } from "node:child_process";
import { cpSync, linkSync, mkdirSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI } from "../helpers.js";
import { hostSkipReason, pinnedHostDir, versionProblem } from "../host-install.js";
import { endProcessesMarked } from "../leftovers.js";
import { type Pane, startPane } from "../tmux-pane.js";
import type { CodexModel } from "./model-server.js";

/** The Codex CLI version the tests pin (test/support/codex/cli/package-lock.json). */
export const CODEX_VERSION = "0.171.0";

/** The target triple of this platform's Codex package (Linux x64 here). */
const TARGET = `${process.arch === "arm64" ? "aarch64" : "x86_64"}-unknown-linux-musl`;

/** The folder of the native `codex` (and its helper) in the pinned install. */
export function codexBinDir(): string {
  return join(codexPackageRoot(), "bin");
}

/** The native `codex` binary. */
export function codexBinary(): string {
  return join(codexBinDir(), "codex");
}

/** The platform package's vendor folder: what the daemon copies into `CODEX_HOME`. */
function codexPackageRoot(): string {
  return join(pinnedHostDir("codex"), "node_modules", "@openai", `codex-${process.platform}-${process.arch}`, "vendor", TARGET);
}

/**
 * Why the Codex tests cannot run here, or `undefined`.
 * @throws Error when `$CI` is set and Codex is missing.
 */
export const codexSkipReason = hostSkipReason("Codex CLI", () =>
  versionProblem({ name: "Codex CLI", command: [codexBinary()], version: CODEX_VERSION, install: "npm run hosts:install" }),
);

/** Options of {@link prepareCodex}. */
export interface CodexOptions {
  model: CodexModel;
  /** backchannel's data directory. */
  dataDir: string;
  /**
   * How backchannel is added: `install` (the README's `backchannel install codex`, the
   * default), `mcp-add` (only the MCP server, `codex mcp add`: no wake hook), or `none`.
   */
  install?: "install" | "mcp-add" | "none";
}

/** A fresh HOME, CODEX_HOME and working folder. */
export interface CodexHome {
  /** The temporary root holding everything (the marker of the session's processes). */
  root: string;
  home: string;
  codexHome: string;
  cwd: string;
  /** The environment Codex runs with (and the install command). */
  env: Record<string, string>;
  /** What `backchannel install codex` printed, when it ran. */
  installed?: string;
  /** Stops the daemon, ends every process of the session, removes the folders. */
  cleanup(): Promise<void>;
}

/** Codex's provider: the key it sends is any, read from this variable. */
const KEY_VARIABLE = "SCRIPTED_MODEL_KEY";

/**
 * Makes the folders, writes config.toml for the scripted model, lays out the daemon's
 * package, and installs backchannel as the README says.
 * @throws when the install command fails (its output in the message).
 */
export async function prepareCodex(options: CodexOptions): Promise<CodexHome> {
  const root = await mkdtemp(join(tmpdir(), "backchannel-codex-"));
  const home = join(root, "home");
  const codexHome = join(home, ".codex");
  const cwd = join(root, "work");
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(cwd);
  await writeFile(
    join(codexHome, "config.toml"),
    [
      'model = "scripted-model"',
      'model_provider = "scripted"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      "check_for_update_on_startup = false",
      "",
      "[model_providers.scripted]",
      'name = "scripted"',
      `base_url = "${options.model.url}/v1"`,
      'wire_api = "responses"',
      `env_key = "${KEY_VARIABLE}"`,
      "",
    ].join("\n"),
  );
  layOutDaemonPackage(codexHome);
  const env: Record<string, string> = {
    PATH: `${codexBinDir()}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    CODEX_HOME: codexHome,
    [KEY_VARIABLE]: "any",
    BACKCHANNEL_HOME: options.dataDir,
    LANG: "C.UTF-8",
  };
  const prepared: CodexHome = {
    root,
    home,
    codexHome,
    cwd,
    env,
    async cleanup() {
      spawnSync(codexBinary(), ["app-server", "daemon", "stop"], { env, cwd, timeout: 30_000, stdio: "ignore" });
      await endProcessesMarked(root);
      await rm(root, { recursive: true, force: true });
    },
  };
  const install = options.install ?? "install";
  if (install !== "none") {
    const [program, args] =
      install === "install"
        ? [process.execPath, [CLI, "install", "codex"]]
        : [codexBinary(), ["mcp", "add", "backchannel", "--env", `BACKCHANNEL_HOME=${options.dataDir}`, "--", process.execPath, CLI]];
    const installed = spawnSync(program, args, { env, cwd, encoding: "utf8", timeout: 120_000 });
    if (installed.status !== 0) {
      await prepared.cleanup();
      throw new Error(`${install} failed (${installed.status}): ${installed.stderr}${installed.stdout}`);
    }
    prepared.installed = installed.stdout;
  }
  return prepared;
}

/**
 * Lays out `$CODEX_HOME/packages/app-server-daemon` as the daemon's first start would
 * (`releases/<version>-<target>` holding the platform package, `current` naming it),
 * as hard links into the pinned install; where links cannot be made, leaves it to the daemon.
 */
function layOutDaemonPackage(codexHome: string): void {
  const daemon = join(codexHome, "packages", "app-server-daemon");
  const release = join(daemon, "releases", `${CODEX_VERSION}-${TARGET}`);
  try {
    linkTree(codexPackageRoot(), release);
    symlinkSync("bin/codex", join(release, "codex"));
    symlinkSync(release, join(daemon, "current"));
  } catch {
    // Another file system: the daemon copies the package itself, into this HOME.
  }
}

/** Recreates the tree at `from` under `to`, files as hard links (`cp -al`). */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) cpSync(source, target, { verbatimSymlinks: true });
    else if (statSync(source).isFile()) linkSync(source, target);
  }
}

/** The interactive Codex TUI in a tmux pane. */
export interface CodexTui extends Pane {
  prepared: CodexHome;
  /** Types `text` at the prompt and presses Enter. */
  submit(text: string): Promise<void>;
  /** The id of the newest thread (session) in `$CODEX_HOME/sessions`, or `undefined`. */
  threadId(): Promise<string | undefined>;
  /** Ends the TUI, the daemon and everything of the session, and removes its folders. */
  stop(): Promise<void>;
}

/** Starts `codex` (the TUI) in a tmux pane and waits for its prompt. */
export async function startCodexTui(options: CodexOptions): Promise<CodexTui> {
  const prepared = await prepareCodex(options);
  let pane: Pane;
  try {
    pane = await startPane({
      socket: join(prepared.root, "tmux.sock"),
      cwd: prepared.cwd,
      env: prepared.env,
      command: [codexBinary()],
      columns: 160,
      rows: 50,
    });
  } catch (error) {
    await prepared.cleanup();
    throw error;
  }
  const tui: CodexTui = {
    ...pane,
    prepared,
    async submit(text) {
      await pane.type(text);
      // Typed text and Enter at once read as a paste (a newline in the prompt): press it apart.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await pane.press("Enter");
    },
    async threadId() {
      const files = await listFiles(join(prepared.codexHome, "sessions"));
      const newest = files
        .filter((file) => file.endsWith(".jsonl"))
        .sort()
        .at(-1);
      return newest?.match(/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/)?.[1];
    },
    async stop() {
      await pane.stop();
      await prepared.cleanup();
    },
  };
  try {
    await tui.waitForScreen((shown) => shown.includes("›"), { timeoutMs: 60_000 });
  } catch (error) {
    await tui.stop();
    throw error;
  }
  return tui;
}

/** Every file under `dir`, as paths relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true }).catch(() => [] as string[])).map(String);
}
