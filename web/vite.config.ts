/**
 * Builds the browser host's page into one HTML file, dist/web/page/index.html, and
 * (`--mode frame`) the frame an app runs in, dist/web/page/frame.html; web/host.ts
 * serves both next to the MCP endpoint. A single-file build takes one entry at a time.
 */
import { resolve } from "node:path";
import { defineConfig, type Plugin } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

const root = resolve(import.meta.dirname, "page");

/** The page's one script as the single-file build inlines it into the head. */
const INLINE_MODULE_SCRIPT = /<script type="module" crossorigin>[\s\S]*?<\/script>\n?/;

/**
 * Moves the page's inlined script from the head (where Vite puts an entry) to the end
 * of the body. A module script runs after the document is parsed wherever it stands,
 * but an inline one is compiled where the parser meets it: in the head, its 450 KB held
 * back the page's style and the app frame that the page's first script starts on a link
 * (web/page-files.ts, `AHEAD_SCRIPT`).
 */
function scriptAtBodyEnd(): Plugin {
  return {
    name: "backchannel-script-at-body-end",
    apply: "build",
    // After vite-plugin-singlefile (a `post` plugin listed before this one), which inlines the script.
    enforce: "post",
    generateBundle: {
      order: "post",
      handler(_options, bundle) {
        for (const file of Object.values(bundle)) {
          if (file.type !== "asset" || !file.fileName.endsWith(".html") || typeof file.source !== "string") continue;
          const script = INLINE_MODULE_SCRIPT.exec(file.source)?.[0];
          if (script === undefined) continue;
          file.source = file.source.replace(script, "").replace(/<\/body>/i, () => `${script.trimEnd()}\n</body>`);
        }
      },
    },
  };
}

export default defineConfig(({ mode }) => ({
  root,
  logLevel: "warn",
  build: {
    outDir: resolve(import.meta.dirname, "../dist/web/page"),
    // The page's build empties the folder; the frame's, which runs after it, keeps the page.
    emptyOutDir: mode !== "frame",
    target: "es2022",
    rollupOptions: {
      input: resolve(root, mode === "frame" ? "frame.html" : "index.html"),
      // ext-apps' PostMessageTransport logs every message it passes with console.debug (whole documents among
      // them) and has no option to stop it: the page drops those calls, as the apps do (app/vite.config.ts).
      treeshake: { manualPureFunctions: ["console.debug"] },
    },
  },
  plugins: [viteSingleFile(), scriptAtBodyEnd()],
}));
