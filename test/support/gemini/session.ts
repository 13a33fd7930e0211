/**
 * The real Gemini CLI (pinned, installed by `npm run hosts:install`) against the scripted
 * model (model-server.ts), with a fresh HOME and working folder and no network
 * (`GOOGLE_GEMINI_BASE_URL` at the scripted model, any `GEMINI_API_KEY`, settings
 * `security.auth.selectedType: "gemini-api-key"`), and backchannel installed as the
 * README tells a user: `gemini extensions link <checkout>/gemini-extension --consent`,
 * with `gemini` on the PATH.
 *
 * The session is headless, `gemini -p <prompt> --yolo --skip-trust -o stream-json`: with
 * the extension's AfterAgent hook it does not end while a channel is open, each wake a
 * continuation of the same run. Teardown ends Gemini and every process still marked with
 * its HOME (a hook Gemini leaves running when it is killed).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { endProcessTree } from "../claude-code/session.js";
import { readJsonLines, type StreamEvent } from "../json-lines.js";
import { hostSkipReason, pinnedHostDir, versionProblem } from "../host-install.js";
import { endProcessesMarked } from "../leftovers.js";
import type { GeminiModel } from "./model-server.js";

/** The Gemini CLI version the tests pin (test/support/gemini/cli/package-lock.json). */
export const GEMINI_VERSION = "0.61.0";

/** The checkout's extension folder, as the README names it. */
export const EXTENSION_ROOT = fileURLToPath(new URL("../../../../gemini-extension", import.meta.url));

/** Gemini CLI's entry script in the pinned install. */
export function geminiScript(): string {
  return join(pinnedHostDir("gemini"), "node_modules", "@google", "gemini-cli", "bundle", "gemini.js");
}

/**
 * Why the Gemini CLI tests cannot run here, or `undefined`.
 * @throws Error when `$CI` is set and Gemini CLI is missing.
 */
export const geminiSkipReason = hostSkipReason("Gemini CLI", () =>
  versionProblem({ name: "Gemini CLI", command: [process.execPath, geminiScript()], version: GEMINI_VERSION, install: "npm run hosts:install" }),
);

/** Options of {@link prepareGemini}. */
export interface GeminiOptions {
  model: GeminiModel;
  /** backchannel's data directory. */
  dataDir: string;
  /** Link the extension (the README's line). Default true; false for Gemini CLI's own floor. */
  install?: boolean;
}

/** A fresh HOME and working folder. */
export interface GeminiHome {
  /** The temporary root holding everything (the marker of the session's processes). */
  root: string;
  home: string;
  cwd: string;
  /** The environment Gemini CLI runs with, `gemini` on its PATH. */
  env: Record<string, string>;
  /** What the extension's link printed, when it ran. */
  installed?: string;
  /** Ends every process of the session and removes the folders. */
  cleanup(): Promise<void>;
}

/**
 * Makes the folders and settings, puts a `gemini` command on the PATH, and links the
 * extension as the README says.
 * @throws when linking fails (its output in the message).
 */
export async function prepareGemini(options: GeminiOptions): Promise<GeminiHome> {
  const root = await mkdtemp(join(tmpdir(), "backchannel-gemini-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  const bin = join(root, "bin");
  await mkdir(join(home, ".gemini"), { recursive: true });
  await mkdir(cwd);
  await mkdir(bin);
  await writeFile(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2));
  // `gemini` as npm's global install names it: the bundle run by this Node.
  await writeFile(join(bin, "gemini"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(geminiScript())} "$@"\n`);
  await chmod(join(bin, "gemini"), 0o755);
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    GEMINI_API_KEY: "any",
    GOOGLE_GEMINI_BASE_URL: options.model.url,
    BACKCHANNEL_HOME: options.dataDir,
    LANG: "C.UTF-8",
  };
  const prepared: GeminiHome = {
    root,
    home,
    cwd,
    env,
    async cleanup() {
      await endProcessesMarked(root);
      await rm(root, { recursive: true, force: true });
    },
  };
  if (options.install ?? true) {
    const linked = spawnSync("gemini", ["extensions", "link", EXTENSION_ROOT, "--consent"], { env, cwd, encoding: "utf8", timeout: 120_000 });
    if (linked.status !== 0 || !/linked successfully/.test(linked.stdout + linked.stderr)) {
      await prepared.cleanup();
      throw new Error(`gemini extensions link failed (${linked.status}): ${linked.stderr}${linked.stdout}`);
    }
    prepared.installed = linked.stdout + linked.stderr;
  }
  return prepared;
}

/** A line of `-o stream-json`. */
export type GeminiEvent = StreamEvent;

/** A running headless session. */
export interface GeminiRun {
  prepared: GeminiHome;
  child: ChildProcess;
  /** Every line printed on stdout so far, parsed. */
  events: GeminiEvent[];
  stderr(): string;
  /**
   * Resolves with the first event at or after `from` that `match` accepts.
   * @throws when Gemini exits or `timeoutMs` (default 60,000) passes first.
   */
  waitForEvent(match: (event: GeminiEvent) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<GeminiEvent>;
  /** Whether the process has exited. */
  exited(): boolean;
  /** Ends Gemini and everything of the session, and removes its folders. */
  stop(): Promise<void>;
}

/** Starts `gemini -p <prompt> --yolo --skip-trust -o stream-json` in a prepared HOME. */
export async function runGemini(prompt: string, options: GeminiOptions): Promise<GeminiRun> {
  const prepared = await prepareGemini(options);
  const child = spawn("gemini", ["-p", prompt, "--yolo", "--skip-trust", "-o", "stream-json"], {
    cwd: prepared.cwd,
    env: prepared.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const lines = readJsonLines(child, "gemini", () => stderr);
  let stopped = false;
  return {
    prepared,
    child,
    events: lines.events,
    stderr: () => stderr,
    exited: lines.closed,
    waitForEvent: lines.waitForEvent,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.pid !== undefined) await endProcessTree(child.pid);
      await prepared.cleanup();
    },
  };
}
