/**
 * A design's MCP server as a real child process, behind the SDK's own `Client` over
 * stdio: what an MCP host does; or, for a design served over HTTP, the SDK's `Client`
 * over Streamable HTTP to its endpoint: what a remote host does.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Design } from "../designs.js";

/** A connected server process. */
export interface ServerProcess {
  client: Client;
  /** The server's process id (for CPU time); none for a design served over HTTP (its replicas serve every client). */
  pid: number | undefined;
  /**
   * Calls `tool` and returns its `structuredContent`.
   * @throws when the call fails or the tool answers with an error.
   */
  call<T>(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<T>;
  close(): Promise<void>;
}

/** Starts `design`'s server on `dataDir` and connects a client to it. */
export async function startServer(design: Design, dataDir: string): Promise<ServerProcess> {
  const client = new Client({ name: "backchannel-bench", version: "0.0.0" });
  let pid: number | undefined;
  if (design.mcpUrl) {
    await client.connect(new StreamableHTTPClientTransport(design.mcpUrl));
  } else {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: design.serverArgs,
      env: { ...(process.env as Record<string, string>), ...design.env(dataDir) },
      stderr: "ignore",
    });
    await client.connect(transport);
    if (transport.pid === null) throw new Error(`${design.name} server did not start`);
    pid = transport.pid;
  }
  return {
    client,
    pid,
    async call<T>(tool: string, args: Record<string, unknown>, signal?: AbortSignal) {
      // The long-polls wait up to 30 s; leave the SDK's own timeout well above that.
      const result = await client.callTool({ name: tool, arguments: args }, { signal, timeout: 120_000 });
      if (result.isError) throw new Error(`${design.name} ${tool} failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent as T;
    },
    close: () => client.close(),
  };
}
