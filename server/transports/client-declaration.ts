/**
 * What a client declares about itself, read from its requests as they arrive, for
 * ../client-view.ts: `initialize`'s capabilities and client info (protocol 2025), or the
 * per-request envelope every request carries on 2026-07-28
 * (`_meta["io.modelcontextprotocol/clientCapabilities"]` and `…/clientInfo`).
 *
 * Over stateless HTTP a 2025 client declares itself only in `initialize`, which one
 * request serves; its later requests say nothing. So the answer to `initialize` carries
 * an `Mcp-Session-Id` that holds what the server made of the declaration
 * ({@link sessionIdFor}), which the client sends back with every later request. It is
 * the client's own declaration coming back: a client that forges it claims no more than
 * it could claim in `initialize`.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { ClientView, DeclaredClient } from "../client-view.js";

const capabilities = z.object({ extensions: z.record(z.string(), z.unknown()).optional() }).loose();
const clientInfo = z.object({ name: z.string() }).loose();

const initialize = z.object({
  method: z.literal("initialize"),
  params: z.object({ capabilities: capabilities.optional(), clientInfo: clientInfo.optional() }).loose(),
});

const enveloped = z.object({
  params: z
    .object({
      _meta: z
        .object({ "io.modelcontextprotocol/clientCapabilities": capabilities, "io.modelcontextprotocol/clientInfo": clientInfo.optional() })
        .loose(),
    })
    .loose(),
});

/**
 * What `message` (a JSON-RPC message, or a batch of them) declares about its client:
 * the first `initialize`, or the first per-request envelope. `undefined` when it
 * declares nothing.
 */
export function declarationOf(message: unknown): DeclaredClient | undefined {
  if (Array.isArray(message)) {
    for (const each of message) {
      const found = declarationOf(each);
      if (found) return found;
    }
    return undefined;
  }
  const opening = initialize.safeParse(message);
  if (opening.success) {
    const { params } = opening.data;
    return { extensions: params.capabilities?.extensions ?? {}, name: params.clientInfo?.name ?? "" };
  }
  const request = enveloped.safeParse(message);
  if (!request.success) return undefined;
  const meta = request.data.params._meta;
  return {
    extensions: meta["io.modelcontextprotocol/clientCapabilities"].extensions ?? {},
    name: meta["io.modelcontextprotocol/clientInfo"]?.name ?? "",
  };
}

/** Whether `message` is (or, in a batch, holds) a 2025 `initialize` request. */
export function isInitialize(message: unknown): boolean {
  return Array.isArray(message) ? message.some(isInitialize) : initialize.safeParse(message).success;
}

/** The prefix of session ids this server hands out; the letters after it are the view's flags. */
const SESSION_PREFIX = "bc1-";

/**
 * The `Mcp-Session-Id` for a 2025 client over stateless HTTP whose `initialize` gave
 * `view`: flags (`a` shows apps, `t` calls the app-only tools, the wake path's first
 * letter), then random hex so that ids differ between clients.
 */
export function sessionIdFor(view: ClientView): string {
  const flags = `${view.showsApps ? "a" : ""}${view.callsAppTools ? "t" : ""}${view.wake[0]}`;
  return `${SESSION_PREFIX}${flags}-${randomBytes(12).toString("hex")}`;
}

/** The view a session id of {@link sessionIdFor} holds; `undefined` for any other id, or none. */
export function viewOfSessionId(sessionId: string | undefined): ClientView | undefined {
  const match = /^bc1-(a?)(t?)([hsc])-[0-9a-f]{24}$/.exec(sessionId ?? "");
  if (!match) return undefined;
  const wake = match[3] === "h" ? "hook" : match[3] === "c" ? "chat" : "shell";
  return { showsApps: match[1] === "a", callsAppTools: match[2] === "t", wake };
}
