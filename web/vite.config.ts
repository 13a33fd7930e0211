/**
 * Builds the browser host's page into one HTML file, dist/web/page/index.html, and
 * (`--mode frame`) the frame an app runs in, dist/web/page/frame.html; web/host.ts
 * serves both next to the MCP endpoint. A single-file build takes one entry at a time.
 */
import { resolve } from "node:path";
import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

const root = resolve(import.meta.dirname, "page");

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
  plugins: [viteSingleFile()],
}));
