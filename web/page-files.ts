/**
 * The browser host's page and its app frame, as built by Vite (web/vite.config.ts) into
 * dist/web/page/, with the headers each is served with. The page's content security
 * policy allows its own inline script and style by their digests and nothing else of
 * the kind: a script injected into it (a name, a title, an answer) would not run.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { DiscoverResult } from "@modelcontextprotocol/client";
import { escapeAttribute, GUARD_HEADERS } from "./gate.js";

/** The folder the page was built into. */
const PAGE_DIR = new URL("./page/", import.meta.url);

/** What the host tells the page about itself (web/page/host.ts reads it). */
export interface PageConfig {
  mode: "host" | "playground";
  /** The watcher command for the store, `CHANNEL_ID` standing for the channel. */
  watch?: string;
  /**
   * The `ui://` resource each app-opening tool renders, as its `tools/list` entry names
   * it: the page starts reading the app before it has listed the tools.
   */
  resources?: Record<string, string>;
  /** The MCP endpoint's answer to `server/discover`, which the page adopts instead of asking. */
  discover?: DiscoverResult;
}

/** The built page and frame, with their headers. */
export interface PageFiles {
  /** The page for `config`, and its headers. */
  page(config: PageConfig): { body: string; headers: Record<string, string> };
  /** The frame an app runs in, and its headers. */
  frame: { body: string; headers: Record<string, string> };
}

/**
 * The policy of the frame an app runs in: the one hosts give an app that declares no
 * `_meta.ui.csp` (no network at all), in a sandbox of its own (an opaque origin, even
 * when opened alone), framed by this host's page only.
 */
const FRAME_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts";

/**
 * Reads the built page and frame.
 * @throws Error saying to build when they are missing.
 */
export async function readPageFiles(): Promise<PageFiles> {
  let page: string;
  let frame: string;
  try {
    [page, frame] = await Promise.all([readFile(new URL("index.html", PAGE_DIR), "utf8"), readFile(new URL("frame.html", PAGE_DIR), "utf8")]);
  } catch {
    throw new Error("the browser host's page is not built: run `npm run build`");
  }
  const pageCsp =
    `default-src 'none'; script-src ${digests(page, "script")}; style-src ${digests(page, "style")}; connect-src 'self'; frame-src 'self'; ` +
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  const html = { ...GUARD_HEADERS, "content-type": "text/html; charset=utf-8" };
  return {
    page: (config) => ({
      body: page.replace(/<head>/i, `<head><meta name="backchannel-page" content="${escapeAttribute(JSON.stringify(config))}">`),
      headers: { ...html, "content-security-policy": pageCsp },
    }),
    frame: { body: frame, headers: { ...html, "x-frame-options": "SAMEORIGIN", "content-security-policy": FRAME_CSP } },
  };
}

/** The CSP sources that allow each inline `<tag>` element of `html` by its SHA-256 digest; `'none'` when there is none. */
function digests(html: string, tag: "script" | "style"): string {
  const sources = [...html.matchAll(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`, "gi"))]
    .filter((match) => !/\bsrc=/i.test(match[0].slice(0, match[0].indexOf(">"))))
    .map((match) => `'sha256-${createHash("sha256").update(match[1]!).digest("base64")}'`);
  return sources.length > 0 ? sources.join(" ") : "'none'";
}
