/**
 * `backchannel hook stop`: Claude Code's wake hook (a `Stop` hook with
 * `"asyncRewake": true`, see plugin/hooks/hooks.json). Claude Code runs it in the
 * background after every turn; when it exits 2, an idle session gets a turn with its
 * stderr as a reminder, and that turn ends in another Stop, which starts it again: the
 * agent stays reachable without arming anything (docs/claude-code-plugin.md).
 *
 * Exit 2 means exactly one thing: a message waits that the agent was not woken for
 * (or, once per timeout, that the hook is about to run out of time: see
 * {@link TIMEOUT_NOTE}). Everything else exits 0 with the reason on stderr (stdin that
 * is not a Stop hook's input, no data directory, a store away, a crash): a hook that
 * exits 2 on its own failure would wake the model in a loop.
 *
 * A one-shot run (`claude -p "…"`, whose prompt is a string, not `--input-format
 * stream-json`) has nothing to wake: it ends with its turn. Claude Code 2.1.328 runs an
 * `asyncRewake` hook in the foreground there and waits for it before it exits, so the
 * hook returns at once in such a run (docs/claude-code-plugin.md).
 */
import { processArguments } from "../core/process-info.js";
import { sessionHostPid, sessionKey } from "../core/session-key.js";
import { oneLine } from "../core/text.js";
import { runSessionWatcher } from "../watcher/session-run.js";
import { readStdin } from "./stdin.js";

/** Exit codes of the wake hook, as Claude Code reads them. */
export const STOP_HOOK_EXIT = { quiet: 0, wake: 2 } as const;

/**
 * What the model is told when the hook's own timeout is about to pass with no mail: its
 * turn ends in a Stop that starts the hook again, which is what keeps the agent
 * reachable past Claude Code's time budget for the hook, at one turn per timeout.
 */
export const TIMEOUT_NOTE =
  "backchannel: no message from the apps in this chat yet. Nothing to do: end your turn (that keeps backchannel listening).";

/**
 * Runs the hook: checks stdin, then waits for mail on this session's channels.
 * @param timeoutMs how long to wait before the {@link TIMEOUT_NOTE} wake: set it below the hook's `timeout`.
 * @returns 2 with the summary on stderr when mail waits (or the timeout note), else 0. Never throws.
 */
export async function runStopHook(timeoutMs: number): Promise<number> {
  const note = (line: string) => process.stderr.write(`backchannel hook stop: ${oneLine(line)}\n`);
  try {
    const problem = stopInputProblem(await readStdin());
    if (problem) {
      note(`${problem}; not watching`);
      return STOP_HOOK_EXIT.quiet;
    }
    const host = sessionHostPid(sessionKey());
    const args = host === undefined ? null : processArguments(host);
    if (args && isOneShotRun(args)) {
      note("a one-shot run (claude -p with its prompt) ends with its turn: nothing to wake, not watching");
      return STOP_HOOK_EXIT.quiet;
    }
    const outcome = await runSessionWatcher({ timeoutMs, err: note });
    switch (outcome.kind) {
      case "mail":
        // The summary is built line by line from oneLine'd pieces: written as it is.
        process.stderr.write(`${outcome.summary}\n`);
        return STOP_HOOK_EXIT.wake;
      case "timeout":
        process.stderr.write(`${TIMEOUT_NOTE}\n`);
        return STOP_HOOK_EXIT.wake;
      case "ended":
        note(`${outcome.reason}; stopped`);
        return STOP_HOOK_EXIT.quiet;
      case "failed":
        note(`${outcome.reason}; not watching (the agent is not woken until the next turn starts this hook again)`);
        return STOP_HOOK_EXIT.quiet;
    }
  } catch (error) {
    note(`internal error: ${(error as Error).message}; not watching`);
    return STOP_HOOK_EXIT.quiet;
  }
}

/**
 * Why `text` (the hook's stdin) is not a Stop hook's input, or `undefined` when it is:
 * a JSON object whose `hook_event_name`, when there is one, is `Stop`.
 */
export function stopInputProblem(text: string | undefined): string | undefined {
  if (text === undefined) return "stdin holds more than 8 MiB";
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    return `stdin is not Claude Code's hook input (${(error as Error).message})`;
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) return "stdin is not Claude Code's hook input (not a JSON object)";
  const event = (input as { hook_event_name?: unknown }).hook_event_name;
  if (event !== undefined && event !== "Stop") return `this is the Stop hook, not one for ${JSON.stringify(event)}`;
  return undefined;
}

/**
 * Whether `args`, the command line of the session's `claude` process (its program
 * first), start a one-shot print run: `-p` or `--print`, without streaming input
 * (`--input-format stream-json`, as the Agent SDK and long-lived sessions run it) or an
 * SDK connection (`--sdk-url`). Such a run takes one prompt and exits after its turn;
 * the interactive session and a streaming one stay, and wait for the hook's wake.
 */
export function isOneShotRun(args: readonly string[]): boolean {
  const options = args.slice(1);
  const print = options.some((word) => word === "-p" || word === "--print");
  const streaming = options.some(
    (word, index) =>
      word === "--input-format=stream-json" || (word === "--input-format" && options[index + 1] === "stream-json") || word.startsWith("--sdk-url"),
  );
  return print && !streaming;
}
