/**
 * Named pipes for tests of files that must not be: Node has no mkfifo, so the
 * coreutils command makes them.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

/** Makes a named pipe at `path`. @throws when `mkfifo` fails or is missing. */
export async function mkfifo(path: string): Promise<void> {
  await promisify(execFile)("mkfifo", [path]);
}
