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
  /**
   * The `ui://` resource of the app whose frame the page's first script starts loading
   * from the host ({@link AHEAD_FRAME}: the reader, for a link), before the page's own
   * script has run: the app's script loads while the page's does, in a process of its own.
   */
  aheadApp?: string;
}

/** The built page and frame, with their headers. */
export interface PageFiles {
  /** The page for `config`, and its headers; `session`: the address it moves to first (the link's exchange, web/gate.ts). */
  page(config: PageConfig, session?: string): { body: string; headers: Record<string, string> };
  /** The frame an app runs in, and its headers (those of the frame of {@link PageConfig.aheadApp} too). */
  frame: { body: string; headers: Record<string, string> };
}

/** Where the page's first script loads the frame of {@link PageConfig.aheadApp} from, beside the page. */
export const AHEAD_FRAME = "frame/ahead";

/**
 * The policy of the frame an app runs in: the one hosts give an app that declares no
 * `_meta.ui.csp` (no network at all), in a sandbox of its own (an opaque origin, even
 * when opened alone), framed by this host's page only.
 */
const FRAME_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts";

/**
 * The first script of the page that answers a link's exchange: it moves the address to
 * the session's (`<meta name="backchannel-session">`, the hash kept), so the key leaves
 * the address bar and the history before anything else runs, and the page's relative
 * addresses (its MCP endpoint, its frame) are the session's.
 */
const MOVE_SCRIPT = `history.replaceState(null,"",document.querySelector('meta[name="backchannel-session"]').content+location.hash);`;

/**
 * The script in the page's app container that, when the address names a channel, starts
 * the frame of {@link PageConfig.aheadApp} there (hidden; the channel in its address, for
 * the host to put the channel's state in: web/ahead-frame.ts) and keeps what the app posts
 * before the page's bridge listens (its `ui/initialize`), for web/page/app-frame.ts to
 * take with the frame (`window.backchannelAhead`). It runs after {@link MOVE_SCRIPT}, so
 * the frame's address is the session's.
 */
const AHEAD_SCRIPT =
  `if(location.hash.length>1){const f=document.createElement("iframe"),m=[],l=e=>{e.source===f.contentWindow&&m.push(e)};` +
  `f.sandbox.add("allow-scripts");f.style.visibility="hidden";f.src=${JSON.stringify(`${AHEAD_FRAME}?channel=`)}+encodeURIComponent(location.hash.slice(1));addEventListener("message",l);` +
  `document.currentScript.after(f);window.backchannelAhead={iframe:f,messages:m,stop(){removeEventListener("message",l)}}}`;

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
    `default-src 'none'; script-src ${sourceList([...digests(page, "script"), digest(MOVE_SCRIPT), digest(AHEAD_SCRIPT)])}; style-src ${sourceList(digests(page, "style"))}; connect-src 'self'; frame-src 'self'; ` +
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  const html = { ...GUARD_HEADERS, "content-type": "text/html; charset=utf-8" };
  const frameHeaders = { ...html, "x-frame-options": "SAMEORIGIN", "content-security-policy": FRAME_CSP };
  return {
    page: (config, session) => {
      const meta = `<meta name="backchannel-page" content="${escapeAttribute(JSON.stringify(config))}">`;
      const move =
        session === undefined ? "" : `<meta name="backchannel-session" content="${escapeAttribute(session)}"><script>${MOVE_SCRIPT}</script>`;
      const ahead = config.aheadApp === undefined ? "" : `<script>${AHEAD_SCRIPT}</script>`;
      const body = page.replace(/<head>/i, () => `<head>${move}${meta}`).replace(/<div id="frame">/, (container) => `${container}${ahead}`);
      return { body, headers: { ...html, "content-security-policy": pageCsp } };
    },
    frame: { body: frame, headers: frameHeaders },
  };
}

/** The CSP sources that allow each inline `<tag>` element of `html` by its SHA-256 digest. */
function digests(html: string, tag: "script" | "style"): string[] {
  return [...html.matchAll(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`, "gi"))]
    .filter((match) => !/\bsrc=/i.test(match[0].slice(0, match[0].indexOf(">"))))
    .map((match) => digest(match[1]!));
}

/** `sources` as one CSP source list; `'none'` when there is none. */
function sourceList(sources: string[]): string {
  return sources.length > 0 ? sources.join(" ") : "'none'";
}

/** The CSP source that allows the inline script or style `text`. */
function digest(text: string): string {
  return `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
}
