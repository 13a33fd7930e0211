/**
 * The browser host (web/host.ts) as the tests run it: `backchannel web` as a child
 * process, the hosts servers started in the background (found in /proc), and stopping
 * whatever a test left running.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { Frame, Page } from "playwright-core";
import { CLI, waitUntil } from "./helpers.js";

/** A `backchannel web` started by a test. */
export interface WebProcess {
  child: ChildProcess;
  /** The link it printed (`backchannel web: <link>`, or the playground's). */
  link: URL;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches `pattern`. @throws when it exits first. */
  printed(pattern: RegExp): Promise<void>;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
  /** Ends it (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts `backchannel web ...args` with `env` added; resolves once it prints its link. @throws when it exits first. */
export function startWeb(env: Record<string, string>, args: string[] = ["--port", "0"]): Promise<WebProcess> {
  const child = spawn(process.execPath, [CLI, "web", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const waiters: (() => void)[] = [];
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  void exited.then(() => waiters.splice(0).forEach((wake) => wake()));
  const printed = async (pattern: RegExp) => {
    while (!pattern.test(out)) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`backchannel web exited before printing ${pattern}: ${out}${err}`);
      await new Promise<void>((wake) => waiters.push(wake));
    }
  };
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      waiters.splice(0).forEach((wake) => wake());
      const match = /^backchannel (?:web|playground): (http:\/\/\S+)$/m.exec(out);
      if (match)
        resolve({
          child,
          link: new URL(match[1]!),
          stdout: () => out,
          stderr: () => err,
          printed,
          exited,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            await exited;
          },
        });
    });
    void exited.then((code) => reject(new Error(`backchannel web exited (${code}) before it printed its link: ${out}${err}`)));
  });
}

/**
 * The pids of the browser hosts started in the background for the data directory
 * `dataDir` (`backchannel web --background` with `BACKCHANNEL_HOME=dataDir`), from /proc.
 */
export function backgroundHosts(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!(args.includes("web") && args.includes("--background"))) continue;
      const env = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (env.includes(`BACKCHANNEL_HOME=${dataDir}`)) pids.push(Number(entry));
    } catch {
      // It ended meanwhile.
    }
  }
  return pids;
}

/** Stops the browser host of the store `env` names, if one runs (`backchannel web --stop`). */
export function stopBrowserHost(env: Record<string, string>): void {
  spawnSync(process.execPath, [CLI, "web", "--stop"], { env: { ...process.env, ...env } });
}

/**
 * Resolves once the process `pid` (not a child of this one: its exit is no event here)
 * has ended, looking every 100 ms. @throws after `timeoutMs`.
 */
export async function processEnded(pid: number, timeoutMs: number): Promise<void> {
  await waitUntil(() => !existsSync(`/proc/${pid}`), `process ${pid} ended`, { timeoutMs, intervalMs: 100 });
}

/** The reader's frame in the browser host's page `page`, once its document is in. */
export function readerFrame(page: Page): Promise<Frame> {
  return appFrame(page, "#doc p");
}

/** The app's frame in the browser host's page `page` (the reader or the app shell), once `selector` shows in it. */
export async function appFrame(page: Page, selector: string): Promise<Frame> {
  await page.locator("#frame iframe").waitFor();
  const frame = await (await page.locator("#frame iframe").elementHandle())!.contentFrame();
  await frame!.locator(selector).first().waitFor();
  return frame!;
}
