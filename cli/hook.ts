/**
 * `backchannel hook post-tool-use`: Claude Code's PostToolUse hook (claude-code/hook.ts);
 * `backchannel hook stop`: its wake hook (claude-code/stop-hook.ts).
 */
import { parseCommandLine } from "./args.js";
import { THIS_INSTALLATION } from "../core/commands.js";
import { WAKE_HOOK_TIMEOUT_S } from "../core/limits.js";

/** The wake hook's own timeout: a minute less than the hook's `timeout` in Claude Code. */
const DEFAULT_STOP_TIMEOUT_S = WAKE_HOOK_TIMEOUT_S - 60;

/** Longest timeout: Node's timers take at most 2^31 - 1 ms. */
const MAX_TIMEOUT_S = 2_147_483;

/** The usage text of this command. */
export const USAGE = `Usage: backchannel hook post-tool-use
       backchannel hook stop [--timeout S]

stop: Claude Code's wake hook, a Stop hook with "asyncRewake": true (the plugin
installs it; so does backchannel install hook). It waits for a message on any
channel this session opened and exits 2 with what waits on stderr, which wakes the
agent; it exits 0 (the reason on stderr) on anything else, and ends when a newer one
starts. --timeout S: after S seconds without mail (default 604740, a minute less
than the hook's timeout of 7 days), exit 2 with a note that asks the agent only to
end its turn, which starts the hook again.

post-tool-use:
Claude Code's PostToolUse hook for backchannel's tools: the tool panel shows one line
of each result, and the model still gets a data tool's full result as additional
context. Reads the hook input on stdin; prints the hook output, or nothing for other
tools, error results and results over 9,000 characters. Always exits 0.

Add to settings.json (user or project):
  {"hooks":{"PostToolUse":[{"matcher":"mcp__backchannel__.*","hooks":[{"type":"command","command":"backchannel hook post-tool-use"}]}]}}
Without backchannel on your PATH, use this installation's command,
"${THIS_INSTALLATION} hook post-tool-use", or "npx -y backchannel-mcp hook post-tool-use"
once the package is published ("npx backchannel" is another package).
Use your server's name in the matcher if it is not "backchannel".

Options:
  --timeout S  stop only: give up after S seconds without mail (default 604740)
  -h, --help   show this help`;

/** Runs the command with `args` (after its name); resolves to the exit code. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine("backchannel hook", args, {
    allowPositionals: true,
    options: { timeout: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const hook = positionals.length === 1 ? positionals[0] : undefined;
  if (hook !== "post-tool-use" && hook !== "stop") {
    const what = positionals.length === 0 ? "none" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel hook: the hooks are "stop" and "post-tool-use", not ${what}\n\n${USAGE}\n`);
    return 1;
  }
  if (hook === "stop") {
    const seconds = values.timeout === undefined ? DEFAULT_STOP_TIMEOUT_S : Number(values.timeout);
    if (!(seconds > 0 && Number.isFinite(seconds) && seconds <= MAX_TIMEOUT_S)) {
      // Exit 0, not 1: Claude Code must not count a misconfigured wake hook as anything.
      process.stderr.write(
        `backchannel hook stop: --timeout takes seconds from 1 to ${MAX_TIMEOUT_S}, not ${JSON.stringify(values.timeout)}; not watching\n`,
      );
      return 0;
    }
    const { runStopHook } = await import("../claude-code/stop-hook.js");
    const code = await runStopHook(seconds * 1000);
    // Claude Code wakes the agent when this process exits: once stderr is written, exit
    // without waiting for the closed store's handles to wind down (tens of ms under load).
    await new Promise<void>((written) => process.stderr.write("", () => written()));
    process.exit(code);
  }
  if (values.timeout !== undefined) {
    process.stderr.write("backchannel hook post-tool-use: takes no --timeout\n");
    return 0;
  }
  const { runPostToolUseHook } = await import("../claude-code/hook.js");
  return runPostToolUseHook();
}
