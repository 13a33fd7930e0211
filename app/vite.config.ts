/**
 * Builds each app into ONE self-contained HTML file in dist/app/: hosts' CSP forbids
 * loading anything else. `vite build` makes the reader (dist/app/reader.html),
 * `vite build --mode shell` the app shell that runs agent-written apps
 * (dist/app/shell.html); a single-file build takes one entry at a time. Reports the
 * file's size and fails the build above the budget.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { defineConfig, type Plugin } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

/** Largest app file the build accepts. */
const BUDGET_BYTES = 400 * 1024;
const outDir = resolve(import.meta.dirname, "../dist/app");

/** Each app: the folder its entry sits in (the build's root) and the entry's file name, which names the output. */
const APPS = {
  reader: { root: import.meta.dirname, entry: "reader.html" },
  shell: { root: resolve(import.meta.dirname, "shell"), entry: "shell.html" },
} as const;

/** The MCP SDK's client package, treated as free of side effects (see `treeshake` below). */
const CLIENT_PACKAGE = /node_modules\/@modelcontextprotocol\/client\//;

function reportSize(file: string): Plugin {
  return {
    name: "backchannel-report-size",
    apply: "build",
    closeBundle() {
      const bytes = statSync(resolve(outDir, file)).size;
      const line = `${file}: ${(bytes / 1024).toFixed(1)} KiB (budget ${BUDGET_BYTES / 1024} KiB)`;
      if (bytes > BUDGET_BYTES) throw new Error(`${line}: over budget; drop a dependency or split less into the app`);
      console.log(line);
    },
  };
}

export default defineConfig(({ mode }) => {
  const { root, entry } = mode === "shell" ? APPS.shell : APPS.reader;
  return {
    root,
    logLevel: "warn",
    build: {
      outDir,
      // Not emptied: tsc also compiles app/channel.ts here (the library entry and its tests), and the other app lives here too.
      emptyOutDir: false,
      target: "es2022",
      rollupOptions: {
        input: resolve(root, entry),
        // ext-apps' App imports only `Protocol` from the client package, whose package.json
        // does not declare it free of side effects, so the bundler kept modules the app never
        // uses (OAuth, a JSON Schema validator) for their top-level statements. None of them
        // is a side effect an app relies on (docs/ARCHITECTURE.md, "Hosts": one file per app).
        //
        // ext-apps' PostMessageTransport logs every message it sends and receives with
        // console.debug (a whole document, when reader_state returns it), and takes no option
        // to stop it: its calls are dropped from the build. Its warnings and errors stay.
        treeshake: { moduleSideEffects: (id) => !CLIENT_PACKAGE.test(id), manualPureFunctions: ["console.debug"] },
      },
    },
    plugins: [viteSingleFile(), reportSize(entry)],
  };
});
