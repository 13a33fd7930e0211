/**
 * `backchannel hook post-tool-use`: Claude Code's PostToolUse hook (claude-code/hook.ts).
 */
import { parseArgs } from "node:util";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel hook post-tool-use

Claude Code's PostToolUse hook for backchannel's tools: the tool panel shows one line
of each result, and the model still gets a data tool's full result as additional
context. Reads the hook input on stdin; prints the hook output, or nothing for other
tools, error results and results over 9,000 characters. Always exits 0.

Add to settings.json (user or project):
  {"hooks":{"PostToolUse":[{"matcher":"mcp__backchannel__.*","hooks":[{"type":"command","command":"backchannel hook post-tool-use"}]}]}}
Without backchannel on your PATH, use the published package as the command:
"npx -y backchannel-mcp hook post-tool-use" ("npx backchannel" is another package).
Use your server's name in the matcher if it is not "backchannel".

Options:
  -h, --help  show this help`;

/** Runs the command with `args` (after its name); resolves to the exit code. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "post-tool-use") {
    const what = positionals.length === 0 ? "none" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel hook: the only hook is "post-tool-use", not ${what}\n\n${USAGE}\n`);
    return 1;
  }
  const { runPostToolUseHook } = await import("../claude-code/hook.js");
  return runPostToolUseHook();
}
