/**
 * The Redis server's own ceiling, measured with `redis-benchmark` (Debian's redis-tools,
 * which redis-server depends on): a C client that keeps each of its connections busy,
 * against the same server and persistence settings as the Redis store's figures. What
 * it cannot beat, the store cannot either.
 */
import { spawn } from "node:child_process";

/** The redis-benchmark command; `REDIS_BENCHMARK` names another. */
export const REDIS_BENCHMARK = process.env.REDIS_BENCHMARK ?? "redis-benchmark";

/**
 * Plain `SET`s per second from `clients` connections, one request in flight on each
 * (no pipelining), `requests` in all, against the server on 127.0.0.1:`port`.
 * @returns `undefined` when redis-benchmark is not installed.
 * @throws Error when it runs but fails, or prints no figure.
 */
export async function redisSetCeiling(port: number, clients: number, requests: number): Promise<number | undefined> {
  const args = ["-h", "127.0.0.1", "-p", String(port), "-c", String(clients), "-n", String(requests), "-t", "set", "--csv"];
  const child = spawn(REDIS_BENCHMARK, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const code = await new Promise<number | "missing">((resolve) => {
    child.on("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ENOENT" ? "missing" : 1));
    child.on("close", (status) => resolve(status ?? 1));
  });
  if (code === "missing") return undefined;
  // --csv prints a header, then `"SET","<requests per second>",…`.
  const rps = /^"SET","([\d.]+)"/m.exec(out)?.[1];
  if (code !== 0 || rps === undefined) throw new Error(`${REDIS_BENCHMARK} ${args.join(" ")} failed (${code}): ${err.trim() || out.trim()}`);
  return Number(rps);
}
