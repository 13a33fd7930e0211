/**
 * The build before `npm start`, `npm test` and `npm run cluster`, run only when something
 * changed since the last whole build: a fresh clone's `npm ci` has just built everything
 * (its `prepare`), and building again cost over a minute before the playground's URL.
 *
 * "Changed" is make's rule, over the whole checkout: a file outside `dist/`, `.git/` and
 * any `node_modules/` that is newer than the stamp a successful build leaves
 * (`dist/.build-stamp`, written by `--stamp` as the build's last step). A build that
 * fails leaves no new stamp, so the next run builds again.
 *
 *     node scripts/build-if-stale.mjs           build when stale, else say it is current
 *     node scripts/build-if-stale.mjs --stamp   record that the build just finished
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const STAMP = join(ROOT, "dist", ".build-stamp");
/** Folders whose files are no input of the build. */
const SKIPPED = new Set(["dist", ".git", "node_modules"]);

/**
 * The newest modification time (ms) of the files below `folder`, and the file that has it.
 * @returns `{ ms: 0 }` for a folder with no files.
 */
export function newestInput(folder) {
  let newest = { ms: 0, path: undefined };
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(folder, entry.name);
    const found = entry.isDirectory() ? newestInput(path) : entry.isFile() ? { ms: statSync(path).mtimeMs, path } : { ms: 0 };
    if (found.ms > newest.ms) newest = found;
  }
  return newest;
}

/** The stamp's time (ms), or undefined when there is none (never built, or dist/ removed). */
function stampMs() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return undefined;
  }
}

if (process.argv.includes("--stamp")) {
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = stampMs();
  const newest = newestInput(ROOT);
  if (built !== undefined && newest.ms <= built) {
    process.stderr.write("build: current (nothing changed since the last build)\n");
  } else {
    const why = built === undefined ? "no build yet" : `${newest.path?.slice(ROOT.length + 1)} changed since the last build`;
    process.stderr.write(`build: ${why}; building\n`);
    const run = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
    process.exitCode = run.status ?? 1;
  }
}
