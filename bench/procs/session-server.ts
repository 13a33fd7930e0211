/**
 * `backchannel serve` as the agent's server in one Claude Code session: a real child
 * process behind the SDK's `Client`, with extra environment (CLAUDE_PID,
 * BACKCHANNEL_CLAUDE_CHANNEL), and the moment each notification the client hears
 * arrives. Times are `performance.now()` of this process, taken in the handlers.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { z } from "zod";
import { BACKCHANNEL } from "../designs.js";
import type { ServerProcess } from "./server.js";

/** A Claude Code channel push, `notifications/claude/channel`. */
const PUSH_SCHEMA = { params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }) };
export type Push = z.infer<typeof PUSH_SCHEMA.params>;

/** A notification and when it arrived. */
export interface Timed<T> {
  value: T;
  at: number;
}

/** Every notification of one kind, in the order they arrived. */
export class TimedLog<T> {
  readonly entries: Timed<T>[] = [];
  private readonly waiters = new Set<() => void>();

  add(value: T): void {
    this.entries.push({ value, at: performance.now() });
    for (const wake of this.waiters) wake();
  }

  /**
   * The entry at `index` (0-based), once it has arrived.
   * @throws when it has not arrived within `timeoutMs`, naming `what`.
   */
  async at(index: number, timeoutMs: number, what: string): Promise<Timed<T>> {
    const deadline = performance.now() + timeoutMs;
    while (this.entries.length <= index) {
      const left = deadline - performance.now();
      if (left <= 0)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${this.entries.length} arrived, waiting for #${index + 1})`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
    return this.entries[index]!;
  }
}

/** A connected agent server and what its client heard. */
export interface SessionServer extends ServerProcess {
  /** Every `notifications/tools/list_changed`. */
  listChanged: TimedLog<null>;
  /** Every `notifications/claude/channel`. */
  pushes: TimedLog<Push>;
}

/**
 * Starts backchannel's server on `dataDir` with `env` added to this process's
 * environment, its notification handlers registered before it connects so that none
 * is missed.
 */
export async function startSessionServer(dataDir: string, env: Record<string, string>): Promise<SessionServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: BACKCHANNEL.serverArgs,
    env: { ...(process.env as Record<string, string>), BACKCHANNEL_HOME: dataDir, ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "backchannel-bench-agent", version: "0.0.0" });
  const listChanged = new TimedLog<null>();
  const pushes = new TimedLog<Push>();
  client.setNotificationHandler("notifications/tools/list_changed", () => listChanged.add(null));
  client.setNotificationHandler("notifications/claude/channel", PUSH_SCHEMA, (params) => pushes.add(params));
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("backchannel agent server did not start");
  return {
    client,
    pid,
    listChanged,
    pushes,
    async call<T>(tool: string, args: Record<string, unknown>, signal?: AbortSignal) {
      const result = await client.callTool({ name: tool, arguments: args }, { signal, timeout: 120_000 });
      if (result.isError) throw new Error(`backchannel ${tool} failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent as T;
    },
    close: () => client.close(),
  };
}
