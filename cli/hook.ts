/**
 * `backchannel hook post-tool-use`: Claude Code's PostToolUse hook (claude-code/hook.ts);
 * `backchannel hook stop`: its wake hook (claude-code/stop-hook.ts);
 * `backchannel hook permission-request`: the plugin's grant of its own tools
 * (claude-code/permission-hook.ts);
 * `backchannel hook after-agent`: Gemini CLI's wake hook (gemini/after-agent.ts);
 * `backchannel hook codex-stop` and `codex-wake`: Codex CLI's wake hook and the waker it
 * starts (codex/wake.ts).
 */
import { parseCommandLine } from "./args.js";
import { THIS_INSTALLATION } from "../core/commands.js";
import { SESSION_KEY_PATTERN } from "../core/ids.js";
import { WAKE_HOOK_TIMEOUT_S } from "../core/limits.js";

/** The wake hook's own timeout: a minute less than the hook's `timeout` in Claude Code. */
const DEFAULT_STOP_TIMEOUT_S = WAKE_HOOK_TIMEOUT_S - 60;

/** Longest timeout: Node's timers take at most 2^31 - 1 ms. */
const MAX_TIMEOUT_S = 2_147_483;

/**
 * Gemini CLI's wake hook's own timeout: a minute less than the hook's `timeout` in the
 * extension (gemini-extension/hooks/hooks.json), 2^31 - 1 ms, the longest Gemini's timer takes.
 */
const DEFAULT_AFTER_AGENT_TIMEOUT_S = MAX_TIMEOUT_S - 60;

/** The hooks, by name. */
const HOOKS = ["stop", "post-tool-use", "permission-request", "after-agent", "codex-stop", "codex-wake"] as const;

/** The usage text of this command. */
export const USAGE = `Usage: backchannel hook post-tool-use
       backchannel hook stop [--timeout S]
       backchannel hook permission-request
       backchannel hook after-agent [--timeout S]
       backchannel hook codex-stop

stop: Claude Code's wake hook, a Stop hook with "asyncRewake": true (the plugin
installs it; so does backchannel install hook). It waits for a message on any
channel this session opened and exits 2 with what waits on stderr, which wakes the
agent; it exits 0 (the reason on stderr) on anything else, and ends when a newer one
starts. --timeout S: after S seconds without mail (default 604740, a minute less
than the hook's timeout of 7 days), exit 2 with a note that asks the agent only to
end its turn, which starts the hook again.

permission-request: the plugin's PermissionRequest hook. Where Claude Code would ask to
allow one of the plugin's tools and offers to always allow it, it allows the call and
every tool of the plugin's server for the rest of the session; it prints nothing on
any other request (your deny and ask rules still apply). Always exits 0.

after-agent: Gemini CLI's wake hook, an AfterAgent hook (the backchannel extension,
gemini-extension/, installs it). In a session with a channel open it waits for a
message, then answers {"decision":"block","reason":<what waits>}, which makes the agent
answer it; it prints {} at once otherwise. --timeout S: after S seconds without mail
(default 2147423, a minute less than the extension's hook timeout), ask the agent only
to end its turn.

codex-stop: Codex CLI's wake hook, a Stop hook (backchannel install codex installs
it). It starts the waker for the thread whose turn ended and prints {} at once. The
waker ("hook codex-wake", started by it only) waits for a message on the session's
channels and queues what waits for the thread (codex queue --resume), which gives the
agent a turn; its log is <data dir>/watchers/<session>.codex-wake.log.

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
  --timeout S  stop, after-agent: give up after S seconds without mail
  -h, --help   show this help`;

/** Runs the command with `args` (after its name); resolves to the exit code. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine("backchannel hook", args, {
    allowPositionals: true,
    options: {
      timeout: { type: "string" },
      thread: { type: "string" },
      session: { type: "string" },
      "host-pid": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const hook = positionals.length === 1 ? HOOKS.find((name) => name === positionals[0]) : undefined;
  if (hook === undefined) {
    const what = positionals.length === 0 ? "none" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel hook: the hooks are ${HOOKS.map((name) => `"${name}"`).join(", ")}, not ${what}\n\n${USAGE}\n`);
    return 1;
  }
  // A hook misconfigured exits 0 with the reason on stderr: the host must not count it as anything.
  const refuse = (why: string) => {
    process.stderr.write(`backchannel hook ${hook}: ${why}; not watching\n`);
    return 0;
  };
  const waker = values.thread !== undefined || values.session !== undefined || values["host-pid"] !== undefined;
  if (waker && hook !== "codex-wake") return refuse("--thread, --session and --host-pid are the waker's own (codex-wake)");
  if (values.timeout !== undefined && hook !== "stop" && hook !== "after-agent") return refuse("takes no --timeout");
  switch (hook) {
    case "stop":
    case "after-agent": {
      const fallback = hook === "stop" ? DEFAULT_STOP_TIMEOUT_S : DEFAULT_AFTER_AGENT_TIMEOUT_S;
      const seconds = values.timeout === undefined ? fallback : Number(values.timeout);
      if (!(seconds > 0 && Number.isFinite(seconds) && seconds <= MAX_TIMEOUT_S))
        return refuse(`--timeout takes seconds from 1 to ${MAX_TIMEOUT_S}, not ${JSON.stringify(values.timeout)}`);
      if (hook === "stop") {
        const code = await (await import("../claude-code/stop-hook.js")).runStopHook(seconds * 1000);
        // Claude Code wakes the agent when this process exits: once stderr is written, exit
        // without waiting for the closed store's handles to wind down (tens of ms under load).
        await new Promise<void>((written) => process.stderr.write("", () => written()));
        process.exit(code);
      }
      return (await import("../gemini/after-agent.js")).runAfterAgentHook(seconds * 1000);
    }
    case "codex-stop":
      return (await import("../codex/wake.js")).runCodexStopHook();
    case "codex-wake": {
      const hostPid = Number(values["host-pid"]);
      if (values.thread === undefined || values.session === undefined || !(Number.isSafeInteger(hostPid) && hostPid > 1))
        return refuse("needs --thread ID, --session KEY and --host-pid PID (codex-stop starts it with them)");
      if (!SESSION_KEY_PATTERN.test(values.session))
        return refuse(`--session takes a session key (${SESSION_KEY_PATTERN}), not ${JSON.stringify(values.session)}`);
      return (await import("../codex/wake.js")).runCodexWaker({ thread: values.thread, key: values.session, hostPid });
    }
    case "post-tool-use":
      return (await import("../claude-code/hook.js")).runPostToolUseHook();
    case "permission-request":
      return (await import("../claude-code/permission-hook.js")).runPermissionRequestHook();
  }
}
