/** Types of ./doc-paths.mjs (the docs-paths check of `npm run lint`). */

/** The documents checked, relative to the repository's root. */
export declare const DOCS: string[];

/** The paths a Markdown text names, each with its line number and whether it is a link. */
export declare function namedPaths(markdown: string, topLevel: ReadonlySet<string>): { path: string; line: number; link: boolean }[];

/** The paths the documents under `root` name that do not exist, as `<doc>:<line>: <path>`. */
export declare function missingPaths(root: string, docs?: string[]): string[];
