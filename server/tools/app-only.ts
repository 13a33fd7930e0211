/**
 * The app-only tools (`_meta.ui.visibility: ["app"]`): what an app calls, never its
 * model. Hosts that render apps hide them from the model; a client that renders none
 * may not (Gemini CLI lists every tool to its model), and its model could then drain
 * the app's queue. So every app-only tool is registered here, and a server instance
 * whose client may not call them (../client-view.ts) withholds them: they are not
 * listed, and a call gets `APP_ONLY_TOOL`. Each stays harmless for a model that calls
 * it anyway through a host that shows apps.
 */
import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import type {
  CallToolResult,
  McpServer,
  RegisteredTool,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
  ToolCallback,
} from "@modelcontextprotocol/server";
import { UI_EXTENSION } from "../../protocol/client-capabilities.js";
import { messageError } from "./results.js";

/** `_meta` of a tool only the app may call. */
export const APP_ONLY_META = { ui: { visibility: ["app"] } } as const;

/** The app-only tools registered on each server, to withhold them. */
const appOnlyTools = new WeakMap<McpServer, Map<string, RegisteredTool>>();

/** What an app-only tool is registered with: a tool's config, without `_meta` (it is always {@link APP_ONLY_META}). */
export interface AppOnlyToolConfig<InputArgs extends StandardSchemaWithJSON | undefined, OutputArgs extends StandardSchemaWithJSON> {
  title: string;
  description: string;
  inputSchema?: InputArgs;
  outputSchema?: OutputArgs;
  annotations?: ToolAnnotations;
}

/** Registers the app-only tool `name` on `server` (as ext-apps' `registerAppTool`, visible to the app only). */
export function registerAppOnlyTool<OutputArgs extends StandardSchemaWithJSON, InputArgs extends StandardSchemaWithJSON | undefined = undefined>(
  server: McpServer,
  name: string,
  config: AppOnlyToolConfig<InputArgs, OutputArgs>,
  handler: ToolCallback<InputArgs>,
): RegisteredTool {
  const tool = registerAppTool(server, name, { ...config, _meta: APP_ONLY_META }, handler);
  const tools = appOnlyTools.get(server) ?? new Map<string, RegisteredTool>();
  tools.set(name, tool);
  appOnlyTools.set(server, tools);
  return tool;
}

/** The request handler the SDK keeps for a method: read through `Protocol`'s accessor, which the SDK keeps for role classes that chain to a stored handler. */
type StoredHandler = (request: unknown, ctx: ServerContext) => Promise<unknown>;

/**
 * Withholds every app-only tool registered on `server` so far from its client: none is
 * listed (each is disabled before the server connects, so no `list_changed` goes out),
 * and a call of one is answered with `APP_ONLY_TOOL`, which says why, instead of the
 * SDK's "Tool … disabled". Call it once, after every tool is registered.
 */
export function withholdAppOnlyTools(server: McpServer): void {
  const tools = appOnlyTools.get(server);
  if (!tools) return;
  for (const tool of tools.values()) tool.disable();
  const accessor = (server.server as unknown as { _getRequestHandler?: (method: string) => StoredHandler | undefined })._getRequestHandler;
  const original = accessor?.call(server.server, "tools/call");
  // An SDK without the accessor still refuses the call (the tool is disabled), in its own words.
  if (!original) return;
  server.server.setRequestHandler("tools/call", async (request, ctx) => {
    if (tools.has(request.params.name)) return appOnlyRefusal(request.params.name);
    return (await original(request, ctx)) as CallToolResult;
  });
}

/** The answer to a call of an app-only tool by a client that may not call it. */
function appOnlyRefusal(name: string): CallToolResult {
  return messageError(
    "APP_ONLY_TOOL",
    `${name} is called by an app (the reader, an app you opened), not by the model, and this client shows no apps ` +
      `(it declares no ${UI_EXTENSION} extension). Use the model's tools: poll_agent_messages and notify_ui`,
  );
}
