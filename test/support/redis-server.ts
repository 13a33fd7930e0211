/**
 * A real `redis-server` (Debian's package) for the tests: started on a free port with a
 * folder of its own, durable the way the README tells users to run it (`appendonly yes`,
 * `appendfsync always`), killed and restarted at will, and removed at the end.
 *
 * Where redis-server is missing the Redis tests are skipped loudly; in CI (`$CI` set)
 * they fail instead.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { freePort } from "../../deploy/free-port.js";

/** The redis-server program. */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? "redis-server";

/** The answer of {@link redisSkipReason}, found once. */
let skipReason: { reason: string | undefined } | undefined;

/**
 * Why the Redis tests cannot run here, or `undefined` when redis-server is installed.
 * @throws Error when `$CI` is set and redis-server is missing: in CI the Redis tests must run.
 */
export function redisSkipReason(): string | undefined {
  skipReason ??= { reason: findSkipReason() };
  return skipReason.reason;
}

function findSkipReason(): string | undefined {
  if (spawnSync(REDIS_SERVER, ["--version"], { encoding: "utf8" }).status === 0) return undefined;
  const reason = `redis-server is not installed (apt-get install redis-server, or set REDIS_SERVER)`;
  if (process.env.CI) throw new Error(`${reason}; CI is set, so the Redis store tests must run`);
  process.stderr.write(`\n*** SKIPPING the Redis store tests: ${reason}. They run, and must pass, in CI. ***\n\n`);
  return reason;
}

/** Options of {@link startRedis}. */
export interface RedisServerOptions {
  /** `always` (default: acknowledged = on disk) or `everysec`/`no`. */
  appendfsync?: "always" | "everysec" | "no";
  /** `yes` (default) or `no` (persistence off, with `save ""`). */
  appendonly?: "yes" | "no";
  /** More `--name value` arguments. */
  extra?: string[];
  /** The address to bind. Default 127.0.0.1. */
  bind?: string;
}

/** A running redis-server. */
export interface RedisServer {
  port: number;
  /** Its folder (the append-only files). */
  dir: string;
  /** `redis://<bind>:<port>/<db>`. */
  url(db?: number): string;
  /** The process now running (a new one after each restart). */
  child(): ChildProcess;
  /** Sends `signal` and waits until the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and folder (after a kill), and waits until it answers. */
  restart(): Promise<void>;
  /** Runs `commands` on a connection of its own (for setting a test up), then closes it. */
  admin<T>(db: number, commands: (client: AdminClient) => Promise<T>): Promise<T>;
  /** Kills it and removes its folder. */
  stop(): Promise<void>;
}

/** Databases each test server has: every fresh store of a test file gets one of its own. */
export const TEST_DATABASES = 256;

/** Starts a redis-server on a free port with a new temporary folder, and waits until it is ready. */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "backchannel-redis-"));
  const bind = options.bind ?? "127.0.0.1";
  const port = await freePort(bind);
  const args = [
    "--port",
    String(port),
    "--bind",
    bind,
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    options.appendonly ?? "yes",
    "--appendfsync",
    options.appendfsync ?? "always",
    "--databases",
    String(TEST_DATABASES),
    "--maxmemory-policy",
    "noeviction",
    "--protected-mode",
    "no",
    ...(options.extra ?? []),
  ];
  let child = await launch(args);
  const stopOnExit = () => child.kill("SIGKILL");
  process.once("exit", stopOnExit);
  const server: RedisServer = {
    port,
    dir,
    url: (db = 0) => `redis://${bind}:${port}/${db}`,
    child: () => child,
    async kill(signal = "SIGKILL") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await exited;
    },
    async restart() {
      await server.kill("SIGKILL");
      child = await launch(args);
    },
    async admin(db, commands) {
      const client = adminClient(server.url(db));
      client.on("error", () => undefined);
      await client.connect();
      try {
        return await commands(client);
      } finally {
        client.destroy();
      }
    },
    async stop() {
      process.off("exit", stopOnExit);
      await server.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A plain client, for what a test does to Redis behind the store's back. */
function adminClient(url: string) {
  return createClient({ url });
}

/** The client {@link RedisServer.admin} hands out. */
export type AdminClient = ReturnType<typeof adminClient>;

/** Spawns redis-server with `args` and resolves once it accepts connections. */
async function launch(args: string[]): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        child.stdout!.off("data", onData);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code, signal) => reject(new Error(`redis-server exited (${code ?? signal}) before it was ready:\n${output}`)));
  });
  // Keep reading, so that a full pipe never stops the server.
  child.stdout!.resume();
  child.stderr!.resume();
  return child;
}
