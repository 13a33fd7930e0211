/**
 * The docs-paths check of `npm run lint`: every repository path that the docs name
 * exists, so that the docs cannot go on describing a module that is gone.
 *
 * A path is named in backticks, as a relative Markdown link, or in an HTML image's `src`
 * or `srcset` (a `<picture>` with a light and a dark picture). In backticks it counts
 * when its first segment is a top-level folder or file of the repository (`store/open.ts`,
 * `bench/results/`; `dist/x/y.js` stands for its source `x/y.ts`), or when it is a bare
 * file name of source or docs (`queue-log.ts`, `SECURITY.md`), which must exist somewhere
 * in the repository. Anything with a placeholder (`<id>`, `*`, `…`), a space, `$`, `~` or
 * a scheme is an example, not a path. Run as a program, it checks DOCS and exits 1 on a
 * missing path, naming each one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The documents checked, relative to the repository's root. */
export const DOCS = ["README.md", "SECURITY.md", "bench/README.md", "docs"];

/** Extensions of bare file names that name repository files. */
const SOURCE_NAME = /^[\w.-]+\.(ts|mts|mjs|cjs|md)$/;
/** What makes a token an example rather than a path. */
const NOT_A_PATH = /[\s<>*…$~{}()|"'`=,;]|:\/\/|^-|^\.\.?$/;

/**
 * The paths `markdown` names (see the module's comment), each with its line number.
 * @param topLevel the names of the repository's top-level entries.
 */
export function namedPaths(markdown, topLevel) {
  const found = [];
  const lines = markdown.split("\n");
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) return;
    for (const match of line.matchAll(/`([^`\n]+)`/g)) {
      const token = match[1].replace(/[:.]$/, "");
      if (NOT_A_PATH.test(token)) continue;
      const first = token.split("/")[0];
      if ((token.includes("/") && topLevel.has(first)) || (!token.includes("/") && SOURCE_NAME.test(token)))
        found.push({ path: token, line: index + 1, link: false });
    }
    const links = [...line.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g), ...line.matchAll(/\b(?:src|srcset)="([^"\s#]+)"/g)];
    for (const match of links) {
      if (!/^[a-z]+:/i.test(match[1])) found.push({ path: match[1], line: index + 1, link: true });
    }
  });
  return found;
}

/** Every file name under `root`, outside dist/, node_modules/ and .git/. */
function fileNames(root) {
  const names = new Set();
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (["node_modules", "dist", ".git"].includes(entry.name)) continue;
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else names.add(entry.name);
    }
  };
  walk(root);
  return names;
}

/**
 * The paths the documents under `root` name that do not exist.
 * @param docs documents or folders of documents (every `.md` in them), relative to `root`.
 * @returns one line per missing path, `<doc>:<line>: <path>`.
 */
export function missingPaths(root, docs = DOCS) {
  const topLevel = new Set(readdirSync(root));
  const names = fileNames(root);
  const files = docs.flatMap((doc) =>
    statSync(join(root, doc)).isDirectory()
      ? readdirSync(join(root, doc))
          .filter((name) => name.endsWith(".md"))
          .map((name) => join(doc, name))
      : [doc],
  );
  const missing = [];
  for (const file of files) {
    for (const { path, line, link } of namedPaths(readFileSync(join(root, file), "utf8"), topLevel)) {
      const target = link ? join(dirname(join(root, file)), path) : join(root, path.replace(/^dist\/(.*)\.js$/, "$1.ts"));
      const exists = link || path.includes("/") ? existsSync(target) : names.has(basename(path));
      if (!exists) missing.push(`${file}:${line}: ${path}`);
    }
  }
  return missing;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const missing = missingPaths(root);
  for (const line of missing) process.stderr.write(`${line} does not exist: fix the doc, or the path\n`);
  if (missing.length > 0) process.exit(1);
  process.stdout.write(`docs-paths: every path named in ${DOCS.join(", ")} exists (${relative(process.cwd(), root) || "."})\n`);
}
