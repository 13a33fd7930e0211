/**
 * `backchannel token add <principal>`: a static token for `serve --http --auth tokens`
 * (server/auth/token-file.ts).
 */
import { resolve } from "node:path";
import { parseCommandLine } from "./args.js";
import { describeDefaultDataDir, resolveDataDir } from "../core/paths.js";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel token add <principal> [--tokens FILE]

Makes a new random token for <principal> (e.g. alice, or alice@example.com) and
stores only its SHA-256 in the token file, which "serve --http --auth tokens" reads
on every request. The token is printed once, as the last word of the output: keep it
(in the client's configuration or BACKCHANNEL_TOKEN); it cannot be shown again.
A principal may have several tokens; each principal sees only its own channels.

Options:
  --tokens FILE  the token file (default: tokens.json in the data directory,
                 $BACKCHANNEL_HOME, else ${describeDefaultDataDir()}); made 0600
  -h, --help     show this help

Exit codes: 0 done, 1 a bad principal or an unusable token file (message on stderr).`;

/** Runs the command with `args` (after its name); resolves to the exit code. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine("backchannel token", args, {
    allowPositionals: true,
    options: { tokens: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 2 || positionals[0] !== "add") {
    process.stderr.write(`backchannel token: give "add" and one principal\n\n${USAGE}\n`);
    return 1;
  }
  const { addToken, defaultTokenFile } = await import("../server/auth/token-file.js");
  const path = resolve(values.tokens ?? defaultTokenFile(resolveDataDir()));
  const token = await addToken(path, positionals[1]!);
  process.stdout.write(`Added a token for ${positionals[1]} to ${path}. It is shown only now:\n${token}\n`);
  return 0;
}
