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
 * gives the session back at once (the next turn's hook takes over the claim). Gemini
 * does not end a hook whose wait was cancelled, and ignores what it prints: such a hook
 * must not take a wake the next one would give. It tells by the session's transcript,
 * which stays as it is while the turn waits for its hook and grows once Gemini goes on.
 *
 * It never fails the turn and never wakes but for mail: anything else (input that is not
 * Gemini's, no store, a newer hook, no channel) prints `{}` and lets the turn end; the
 * one other block is the note before its own timeout, which asks only for the end of the
 * turn (one model request per timeout, about 25 days).
 */
import { statSync } from "node:fs";
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
    const text = await readStdin();
    const problem = afterAgentInputProblem(text);
    if (problem) note(`${problem}; not watching`);
    else {
      const stillWanted = transcriptUnchanged((JSON.parse(text!) as { transcript_path?: unknown }).transcript_path);
      const outcome = await runSessionWatcher({ timeoutMs, err: note, onlyWithChannels: true, stillWanted });
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
 * A check that the session's transcript (the hook input's `transcript_path`) is as it was
 * when the hook started: its size and modification time. Once it changed, Gemini has gone
 * on without this hook (its wait was cancelled). No check without a transcript to read.
 */
function transcriptUnchanged(path: unknown): (() => string | undefined) | undefined {
  if (typeof path !== "string" || path === "") return undefined;
  const stamp = () => {
    try {
      const stats = statSync(path);
      return `${stats.size}:${stats.mtimeMs}`;
    } catch {
      return "missing";
    }
  };
  const started = stamp();
  return () => (stamp() === started ? undefined : "Gemini CLI went on without this hook (its turn was cancelled); the next one wakes the agent");
}

/**
 * Why `text` (the hook's stdin) is not Gemini CLI's AfterAgent input, or `undefined`
 * when it is: a JSON object whose `hook_event_name` is `AfterAgent`.
 */
export function afterAgentInputProblem(text: string | undefined): string | undefined {
  return hookInputProblem(text, { host: "Gemini CLI", event: "AfterAgent", eventRequired: true });
}
