/**
 * Builds the playground page into one HTML file, dist/playground/web/index.html,
 * which playground/server.ts serves next to the MCP endpoint.
 */
import { resolve } from "node:path";
import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

const root = resolve(import.meta.dirname, "web");

export default defineConfig({
  root,
  logLevel: "warn",
  build: {
    outDir: resolve(import.meta.dirname, "../dist/playground/web"),
    emptyOutDir: true,
    target: "es2022",
    rollupOptions: { input: resolve(root, "index.html") },
  },
  plugins: [viteSingleFile()],
});
