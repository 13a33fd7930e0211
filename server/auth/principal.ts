/**
 * Principals: who a remote caller is, once authenticated. Channels, sessions and walls
 * belong to a principal (docs/ARCHITECTURE.md, "Remote serving"): the same channel id
 * names a different channel for each principal, so another principal's channel behaves
 * exactly like one that does not exist.
 */
import { createHash } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { CallerError } from "../../core/errors.js";

/** A principal name given on the command line (`backchannel token add <principal>`): 1 to 128 of A-Z a-z 0-9 _ . @ + -. */
export const PRINCIPAL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}$/;

/** Thrown for a principal name that does not match {@link PRINCIPAL_PATTERN}. */
export class InvalidPrincipalError extends CallerError {
  override readonly name = "InvalidPrincipalError";
  override readonly code = "INVALID_PRINCIPAL";
  constructor(readonly principal: string) {
    super(
      `invalid principal ${JSON.stringify(principal.slice(0, 80))}: use 1 to 128 characters from A-Z, a-z, 0-9, "_", ".", "@", "+" and "-", starting with a letter or digit`,
    );
  }
}

/** Where the verifiers put the principal in `AuthInfo.extra`. */
const PRINCIPAL_KEY = "principal";

/** `authInfo` with the principal it authenticates recorded in it. */
export function withPrincipal(authInfo: AuthInfo, principal: string): AuthInfo {
  return { ...authInfo, extra: { ...authInfo.extra, [PRINCIPAL_KEY]: principal } };
}

/** The principal a verified request carries, or `undefined` when it carries none. */
export function principalOf(authInfo: AuthInfo | undefined): string | undefined {
  const principal = authInfo?.extra?.[PRINCIPAL_KEY];
  return typeof principal === "string" && principal !== "" ? principal : undefined;
}

/**
 * The namespace of `principal` as it can stand in a path or a key: 32 hex digits of its
 * SHA-256. Any string maps to one (an OAuth `sub` may hold characters no path should),
 * and two principals never share one in practice.
 */
export function principalNamespace(principal: string): string {
  return createHash("sha256").update(principal, "utf8").digest("hex").slice(0, 32);
}
