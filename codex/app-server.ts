/**
 * A short conversation with Codex's own `codex app-server` (JSON-RPC, one message a line
 * on stdio), which `backchannel install codex` uses for what only Codex can do right:
 * edit `config.toml` with Codex's own writer (comments and layout kept) and read the
 * hash Codex trusts a hook by (`hooks/list` → `currentHash`). The server is started for
 * the conversation and ended after it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { VERSION } from "../core/package.js";
import { oneLine } from "../core/text.js";

/** How long one request may take before the conversation is given up: Codex starts in about a second. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A request Codex's app server answered with an error, or could not answer (not started, exited, timed out). */
export class AppServerError extends Error {
  override readonly name = "AppServerError";
}

/** A running `codex app-server`. */
export interface AppServer {
  /**
   * Sends `method` with `params` and resolves with the result.
   * @throws AppServerError when Codex answers an error, exits, or takes longer than 30 s.
   */
  request<T>(method: string, params: unknown): Promise<T>;
  /** Ends the server (stdin closed, then SIGTERM). Never throws. */
  close(): Promise<void>;
}

/**
 * Starts `codex app-server` and says hello (`initialize`, then `initialized`).
 * @param codex the words that run Codex (e.g. `["codex"]`).
 * @param env its environment (`CODEX_HOME` chooses the configuration it edits).
 * @throws AppServerError when Codex cannot be started or does not answer `initialize`.
 */
export async function openAppServer(codex: readonly string[], env: NodeJS.ProcessEnv): Promise<AppServer> {
  const [command, ...args] = codex;
  if (command === undefined) throw new AppServerError("no command runs Codex");
  const child = spawn(command, [...args, "app-server"], { env, stdio: ["pipe", "pipe", "pipe"] });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let stderr = "";
  let ended: Error | undefined;
  const failAll = (error: Error) => {
    ended ??= error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  child.on("error", (error) => failAll(new AppServerError(`cannot run ${command} (${error.message}): install Codex CLI or pass --codex PATH`)));
  child.on("exit", (code, signal) =>
    failAll(new AppServerError(`${command} app-server exited (${signal ?? code}) before it answered: ${oneLine(lastLines(stderr), 600)}`)),
  );
  createInterface({ input: child.stdout! }).on("line", (line) => {
    let message: { id?: unknown; result?: unknown; error?: { message?: unknown } };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return; // not protocol: Codex writes its logs to stderr, but nothing else is trusted here either
    }
    if (typeof message.id !== "number") return; // a notification, or a request of the server's: none is needed here
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error)
      waiter.reject(new AppServerError(`Codex refused it: ${oneLine(String(message.error.message ?? JSON.stringify(message.error)), 600)}`));
    else waiter.resolve(message.result);
  });
  let nextId = 0;
  const send = (message: Record<string, unknown>) => child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  const request = <T>(method: string, params: unknown): Promise<T> => {
    if (ended) return Promise.reject(ended);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new AppServerError(`Codex did not answer ${method} within ${REQUEST_TIMEOUT_MS / 1000} s`));
      }, REQUEST_TIMEOUT_MS);
      pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      send({ id, method, params });
    });
  };
  const server: AppServer = {
    request,
    close: () => endChild(child),
  };
  try {
    await request("initialize", { clientInfo: { name: "backchannel-install", title: "backchannel install", version: VERSION } });
    send({ method: "initialized" });
  } catch (error) {
    await server.close();
    throw error;
  }
  return server;
}

/** Closes the child's stdin, then ends it with SIGTERM if it has not exited within 2 s. */
async function endChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGTERM"), 2_000);
  await exited;
  clearTimeout(timer);
}

/** The last few lines of `text` (Codex's stderr), for an error message. */
function lastLines(text: string): string {
  return text.trim().split("\n").slice(-4).join(" | ");
}
