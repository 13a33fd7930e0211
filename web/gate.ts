/**
 * Who may use the browser host (SECURITY.md, "The browser host"). It listens on
 * 127.0.0.1 only, so the callers to keep out are the other pages of the person's own
 * browser and the other users of the machine. Every request, on every route, passes all
 * of these or gets the same 403 (nothing says what is behind it, or why):
 *
 * - **Host** is `127.0.0.1:<port>` or `localhost:<port>`: a page of another site whose
 *   name was rebound to 127.0.0.1 (DNS rebinding) sends its own name;
 * - **Origin**, when sent, is this host's own: another page of the browser, even one on
 *   127.0.0.1, sends its own origin with every call it makes;
 * - **Sec-Fetch-Site**, when sent, is `same-origin` or `none` (the person opened a link or
 *   typed the address): a navigation or a frame started by another page is refused,
 *   so no other page can open this one on a channel it chose, or frame it. The one
 *   exception is the first load of a link with its key, which another app may open (a
 *   chat's "Open in a browser tab");
 * - the **key**: a random secret in a 0600 file of the data directory, which only the
 *   links carry. The first load of a link (`/?k=<key>`) exchanges it for a session: a
 *   random path `/s/<session>/` and an HttpOnly, SameSite=Strict cookie valid under that
 *   path only, and answers with the session's page, whose first script moves the address
 *   to the session's (`history.replaceState`), so the key leaves the address bar and the
 *   history. Everything else lives under the session's path and needs its cookie.
 *   Cookies do not tell ports apart, but a path does: the browser sends the cookie only
 *   to that path, so a server on another port of 127.0.0.1 that the browser visits
 *   never receives it. The page's own requests are `same-origin`, whoever opened the
 *   link; an HTTP redirect to the session would not do (it keeps the site of whoever
 *   opened the link, another app's page, which the session's routes refuse), nor would
 *   a page that goes on to the session's (a second load of the page, on every link).
 *
 * The cookie is a digest of the session under the key: no session is kept in memory,
 * and a new key ends every session.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isSecret } from "../core/browser-host.js";

/** The cookie that carries a session's proof. */
const COOKIE = "bc";

/** A session id: 16 random bytes, base64url. */
const SESSION_PATTERN = /^\/s\/([A-Za-z0-9_-]{22})\/(.*)$/;

/** What the gate says about a request. */
export type GateVerdict =
  /** Answer 403, as for every refusal. */
  | { kind: "refuse" }
  /** The first load of a link: set `cookie` and answer with the session's page, whose address becomes `location` (the URL's hash kept). */
  | { kind: "exchange"; location: string; cookie: string }
  /** A request of a session: serve `route`, the rest of the path after `/s/<session>/` ("" for the page). */
  | { kind: "serve"; route: string };

/** What the gate checks against: the port the host listens on, and its key. */
export interface GateSettings {
  port: number;
  secret: string;
}

/** The gate's verdict on `req` (see the top of this module). */
export function judgeRequest(req: IncomingMessage, settings: GateSettings): GateVerdict {
  const refuse: GateVerdict = { kind: "refuse" };
  const target = req.url ?? "";
  if (!target.startsWith("/")) return refuse;
  const own = [`127.0.0.1:${settings.port}`, `localhost:${settings.port}`];
  if (!own.includes((req.headers.host ?? "").toLowerCase())) return refuse;
  const origin = req.headers.origin;
  if (origin !== undefined && !own.some((host) => origin.toLowerCase() === `http://${host}`)) return refuse;
  const url = new URL(target, `http://${own[0]}`);
  const site = header(req, "sec-fetch-site");
  const ownSite = site === undefined || site === "same-origin" || site === "none";
  if (url.pathname === "/") {
    const key = url.searchParams.get("k");
    // Another app may open a link (a chat's pop-out), as a navigation of a whole tab only.
    const navigation = ownSite || (header(req, "sec-fetch-mode") === "navigate" && header(req, "sec-fetch-dest") === "document");
    if (req.method !== "GET" || key === null || !navigation || !isSecret(key, settings.secret)) return refuse;
    const session = newSession(settings.secret);
    url.searchParams.delete("k");
    return { kind: "exchange", location: `${session.path}${url.search}`, cookie: session.setCookie };
  }
  const match = SESSION_PATTERN.exec(url.pathname);
  if (!ownSite || !match) return refuse;
  const expected = proof(match[1]!, settings.secret);
  if (!cookies(req, COOKIE).some((value) => isSecret(value, expected))) return refuse;
  return { kind: "serve", route: match[2]! };
}

/** A new session under `secret`: its path (`/s/<session>/`), the Set-Cookie that proves it, and that cookie as a request sends it. */
export function newSession(secret: string): { path: string; setCookie: string; cookie: string } {
  const session = randomBytes(16).toString("base64url");
  const cookie = `${COOKIE}=${proof(session, secret)}`;
  return { path: `/s/${session}/`, setCookie: `${cookie}; Path=/s/${session}/; HttpOnly; SameSite=Strict`, cookie };
}

/** Answers `res` with the gate's refusal: 403, the same body and headers whatever was refused. */
export function sendRefusal(res: ServerResponse): void {
  res
    .writeHead(403, {
      ...GUARD_HEADERS,
      "content-type": "text/plain; charset=utf-8",
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    })
    .end("Forbidden. Open the whole link you were given: it carries a key.\n");
}

/** `text` for a double-quoted HTML attribute. */
export function escapeAttribute(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Headers of every answer of the host: never cached, never sniffed, never framed by
 * another origin, never read by another origin's page (`Cross-Origin-Resource-Policy`),
 * no referrer to where a link leads, and no window that opened it keeps a hold on it.
 */
export const GUARD_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
} as const;

/** The proof of `session` under `secret`: what its cookie holds. */
function proof(session: string, secret: string): string {
  return createHmac("sha256", secret).update(`backchannel session ${session}`).digest("base64url");
}

/** The values of the cookie `name` in `req`'s Cookie headers (the browser may send several, of different paths). */
function cookies(req: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const [key, ...rest] = pair.trim().split("=");
    if (key === name) values.push(rest.join("="));
  }
  return values;
}

/** A header's one value, lower case; undefined when absent or sent more than once. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value.toLowerCase() : undefined;
}
