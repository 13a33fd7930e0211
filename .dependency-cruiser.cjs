/**
 * The layer rules of docs/ARCHITECTURE.md, checked by `npm run lint:layers` (and CI).
 * Each top-level folder imports only from the layers below it:
 *
 *   core ← protocol ← store ← server ← web ← cli
 *   (web renders documents as the reader does: app/document-html.ts, which runs in both)
 *   watcher, claude-code, codex, gemini: core, protocol, store (and each other) only (they must start fast: no SDK)
 *   app: protocol types and ext-apps only (it runs in the browser)
 *   web/page: the browser host's page, in the browser: protocol, app's markdown, ext-apps, the SDK's client
 *   deploy: Node only (it runs the built command, redis-server and nginx as processes)
 *
 * and the stores stay behind one contract: nothing outside store/file/ and store/redis/
 * imports them but store/open.ts (which loads them lazily) and the package's public
 * export (server/index.ts names FileStore); neither store imports the other.
 */
const SDK = "^node_modules/(@modelcontextprotocol|zod)/";

/** A rule that forbids `from` to import anything under the folders `to`. */
function forbid(name, from, to, comment) {
  return { name, comment, severity: "error", from: { path: from }, to: { path: to } };
}

const UPPER_LAYERS = "^(server|cli|watcher|claude-code|codex|gemini|web|deploy|app|test|bench)/";

module.exports = {
  forbidden: [
    forbid("core-is-the-floor", "^core/", "^(protocol|store|node_modules)/|" + UPPER_LAYERS, "core/ imports Node only"),
    forbid("protocol-on-core", "^protocol/", "^(store|node_modules)/|" + UPPER_LAYERS, "protocol/ imports core/ only"),
    forbid("store-below-server", "^store/", UPPER_LAYERS + "|" + SDK, "store/ imports core/, protocol/ and its own libraries"),
    {
      name: "server-below-cli",
      comment:
        "server/ is the MCP server only (it starts the browser host as a command, by path); dist/server/cli.js is a shim for users' configs, allowed by name",
      severity: "error",
      from: { path: "^server/", pathNot: "^server/cli\\.ts$" },
      to: { path: "^(cli|watcher|claude-code|codex|gemini|web|app|test|bench)/" },
    },
    forbid("cli-below-tests", "^cli/", "^(app|web/page|test|bench)/", "cli/ is the top of the Node side"),
    {
      name: "web-below-cli",
      comment:
        "web/ is the browser host's Node side, above the server: it serves web/page/'s build, never imports it; of app/ it runs only the document's rendering (app/document-html.ts), the reader's own",
      severity: "error",
      from: { path: "^web/", pathNot: "^web/page/" },
      to: { path: "^(cli|watcher|claude-code|codex|gemini|app|web/page|test|bench)/", pathNot: "^app/(document-html|markdown-pieces)\\.ts$" },
    },
    forbid(
      "web-page-in-browser",
      "^web/page/",
      "^(core|store|server|cli|watcher|claude-code|codex|gemini|test|bench)/|^web/(?!page/)",
      "web/page/ runs in the browser: protocol types, the app's markdown, ext-apps and the SDK's client only",
    ),
    forbid(
      "watcher-fast",
      "^(watcher|claude-code|codex|gemini)/",
      "^(server|cli|web|app|test|bench)/|" + SDK,
      "watcher/ and the hosts' folders (claude-code/, codex/, gemini/) start fast: core, protocol and store only, never the SDK",
    ),
    forbid(
      "app-in-browser",
      "^app/",
      "^(core|store|server|cli|watcher|claude-code|codex|gemini|web|test|bench)/",
      "app/ runs in the browser: protocol types and ext-apps only",
    ),
    forbid(
      "deploy-runs-processes",
      "^deploy/",
      "^(core|protocol|store|server|cli|watcher|claude-code|codex|gemini|web|app|test|bench|node_modules)/",
      "deploy/ runs the built command, redis-server and nginx as processes: Node only",
    ),
    {
      name: "stores-behind-one-contract",
      comment: 'only store/open.ts loads a store; the public export names FileStore (docs/ARCHITECTURE.md, "The store")',
      severity: "error",
      from: {
        path: "^(core|protocol|store|server|cli|watcher|claude-code|codex|gemini|web|deploy|app)/",
        pathNot: "^(store/(file|redis)/|store/open\\.ts$|server/index\\.ts$)",
      },
      to: { path: "^store/(file|redis)/" },
    },
    forbid("file-store-alone", "^store/file/", "^store/redis/", "the file store does not import the Redis store"),
    forbid("redis-store-alone", "^store/redis/", "^store/file/", "the Redis store does not import the file store"),
    { name: "no-cycles", severity: "error", from: {}, to: { circular: true } },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^dist/" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "types", "default"], extensions: [".ts", ".js"] },
  },
};
