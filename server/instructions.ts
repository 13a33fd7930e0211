/**
 * The server's `instructions`, sent at initialize: the one loop the agent needs. Kept
 * under 2 KB because Claude Code cuts longer ones; everything else is in the recipes.
 */

import { backchannelCommand } from "../core/commands.js";

/** The reader loop, naming this installation's watcher command. */
export const INSTRUCTIONS = `backchannel shows documents in an in-chat reader: the user highlights a passage and asks, and your answer appears in a card in the margin. You only act during a turn, so keep a watcher armed to be woken.

1. open_reader {"markdown": "..."} (or "text", or "path" of a local file). It returns channel_id and watch_command.
2. Run watch_command, \`${backchannelCommand()} watch <channel_id>\`, as a background command (Claude Code: Bash with run_in_background: true). It exits as soon as the reader sends you something.
3. When it exits, call poll_agent_messages {"channel_id": "<channel_id>"}. It returns the messages and clears them. For each:
   - ready: notify_ui {"channel_id": "<channel_id>", "event": "hello", "data": {}}
   - ask {thread_id, quote, paragraph, question, history}: notify_ui {"channel_id": "<channel_id>", "event": "answer", "data": {"thread_id": "<thread_id>", "text": "..."}}. Answer every ask, with its own thread_id. Keep answers short (a few sentences; markdown is fine): the card is narrow.
4. Run the watcher again (step 2), every time, until the user is done with the reader. It exits 2 after 30 minutes without mail: run it again then too.

No background commands on this host? Wait inside the turn instead: poll_agent_messages {"channel_id": "<channel_id>", "wait_ms": 120000}, answer, repeat.
Other ways to be woken (Monitor, /loop) and host setup: read_recipe.`;
