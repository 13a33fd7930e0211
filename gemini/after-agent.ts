/**
 * `backchannel hook after-agent`: Gemini CLI's wake hook, an `AfterAgent` hook of the
 * backchannel extension (gemini-extension/hooks/hooks.json). Gemini runs it when the
 * agent's turn is done and waits for it; answering `{"decision": "block", "reason": …}`
 * makes the agent go on with the reason as its next message. So the hook waits for mail
 * on the session's channels (a session watcher, watcher/) and answers block with what
 * waits: the agent answers, its turn ends, and the hook runs again (docs/hosts.md,
 * "Gemini CLI").
 *
 * While it waits Gemini shows "Executing Hook … (esc to cancel)" and keeps what the
 * person types queued: so it waits only in a session that has a channel open, and Esc
 * gives the session back at once (the next turn's hook takes over the claim).
 *
 * It never fails the turn and never wakes but for mail: anything else (input that is not
 * Gemini's, no store, a newer hook, no channel) prints `{}` and lets the turn end; the
 * one other block is the note before its own timeout, which asks only for the end of the
 * turn (one model request per timeout, about 25 days).
 */
import { oneLine } from "../core/text.js";
import { hookInputProblem, TIMEOUT_NOTE } from "../claude-code/stop-hook.js";
import { readStdin } from "../claude-code/stdin.js";
import { runSessionWatcher } from "../watcher/session-run.js";

/** What the hook prints: Gemini CLI's hook output. */
export type AfterAgentOutput = { decision: "block"; reason: string } | Record<string, never>;

/**
 * Runs the hook: checks stdin, then waits for mail on this session's channels.
 * @param timeoutMs how long to wait before the {@link TIMEOUT_NOTE}: below the hook's `timeout`.
 * @returns 0, always, with the output JSON on stdout. Never throws.
 */
export async function runAfterAgentHook(timeoutMs: number): Promise<number> {
  const note = (line: string) => process.stderr.write(`backchannel hook after-agent: ${oneLine(line)}\n`);
  let output: AfterAgentOutput = {};
  try {
    const problem = afterAgentInputProblem(await readStdin());
    if (problem) note(`${problem}; not watching`);
    else {
      const outcome = await runSessionWatcher({ timeoutMs, err: note, onlyWithChannels: true });
      if (outcome.kind === "mail") output = { decision: "block", reason: outcome.summary };
      else if (outcome.kind === "timeout") output = { decision: "block", reason: TIMEOUT_NOTE };
      else note(`${outcome.reason}; not watching until the next turn ends`);
    }
  } catch (error) {
    note(`internal error: ${(error as Error).message}; not watching`);
  }
  process.stdout.write(`${JSON.stringify(output)}\n`);
  return 0;
}

/**
 * Why `text` (the hook's stdin) is not Gemini CLI's AfterAgent input, or `undefined`
 * when it is: a JSON object whose `hook_event_name` is `AfterAgent`.
 */
export function afterAgentInputProblem(text: string | undefined): string | undefined {
  return hookInputProblem(text, { host: "Gemini CLI", event: "AfterAgent", eventRequired: true });
}
