/**
 * A program of test/fixtures/ run as a child process, its stdout collected as whole
 * lines: a line cut short by a kill has no newline, so it never counts (a writer prints
 * a line only after the store acknowledged its append).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built path of a fixture program, e.g. `fixturePath("writer")`. */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}.js`, import.meta.url));
}

/** A running fixture program. */
export interface FixtureProcess {
  child: ChildProcess;
  /** The whole lines printed so far. */
  lines: string[];
  /** Resolves with the exit code when it ends. */
  exited: Promise<number | null>;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves once a line equal to `text` was printed. @throws when the program exits first. */
  waitFor(text: string): Promise<void>;
  /** Resolves once `ready()` holds (checked after each batch of lines) or the program has ended. */
  until(ready: () => boolean): Promise<void>;
}

/** Starts fixture `name` with `args` and `env` added to this process's environment; `onLines` hears each batch of whole lines. */
export function spawnFixture(name: string, args: string[], env: Record<string, string> = {}, onLines?: () => void): FixtureProcess {
  const child = spawn(process.execPath, [fixturePath(name), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let buffer = "";
  const lines: string[] = [];
  const listeners: (() => void)[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const complete = buffer.split("\n");
    buffer = complete.pop()!;
    lines.push(...complete);
    if (complete.length > 0) onLines?.();
    listeners.splice(0).forEach((wake) => wake());
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // "close", not "exit": it comes after the pipes are drained, so `lines` and `stderr()` are whole by then.
  let closed = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      closed = true;
      listeners.splice(0).forEach((wake) => wake());
      resolve(code);
    }),
  );
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    async waitFor(text: string) {
      while (!lines.includes(text)) {
        if (closed) throw new Error(`${name} exited ${child.exitCode} before printing ${text}: ${stderr}`);
        await new Promise<void>((resolve) => listeners.push(resolve));
      }
    },
    async until(ready: () => boolean) {
      while (!ready() && !closed) await new Promise<void>((resolve) => listeners.push(resolve));
    },
  };
}
