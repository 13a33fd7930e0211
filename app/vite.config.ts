/**
 * Builds the reader into ONE self-contained HTML file, dist/app/reader.html: hosts'
 * CSP forbids loading anything else. Reports the file's size and fails the build
 * above the budget.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { defineConfig, type Plugin } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

/** Largest reader the build accepts. */
const BUDGET_BYTES = 400 * 1024;
const outDir = resolve(import.meta.dirname, "../dist/app");

function reportSize(): Plugin {
  return {
    name: "backchannel-report-size",
    apply: "build",
    closeBundle() {
      const bytes = statSync(resolve(outDir, "reader.html")).size;
      const line = `reader.html: ${(bytes / 1024).toFixed(1)} KiB (budget ${BUDGET_BYTES / 1024} KiB)`;
      if (bytes > BUDGET_BYTES) throw new Error(`${line}: over budget; drop a dependency or split less into the app`);
      console.log(line);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  logLevel: "warn",
  build: {
    outDir,
    // Not emptied: tsc also compiles app/channel.ts here (the library entry and its tests).
    emptyOutDir: false,
    target: "es2022",
    rollupOptions: { input: resolve(import.meta.dirname, "reader.html") },
  },
  plugins: [viteSingleFile(), reportSize()],
});
