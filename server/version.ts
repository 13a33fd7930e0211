/** The package's name and version, read from package.json once. */
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { name: string; version: string };

/** The package version, e.g. `0.1.0`. */
export const VERSION: string = pkg.version;
/** The package name, `backchannel`. */
export const NAME: string = pkg.name;
