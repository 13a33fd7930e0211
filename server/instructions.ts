/**
 * The server's `instructions`, sent at initialize: the one loop the agent needs. Kept
 * under 2 KB because Claude Code cuts longer ones, and short because the model pays for
 * them on every turn (with the tools, under 4,000 characters); everything else is in the recipes.
 */

import { watchCommand } from "../core/commands.js";

/**
 * The loop for the reader and agent-written apps, naming this installation's watcher
 * command exactly as `watch_command` will be, `where` included (the words naming the
 * store, see `watchCommand`; default none). `readLocalFiles`: whether `open_reader` takes
 * a `path` here (stdio); the instructions offer only what works on the transport.
 */
export function instructions(readLocalFiles: boolean, where: readonly string[] = []): string {
  const source = readLocalFiles ? '(or "text", or "path")' : '(or "text")';
  return `backchannel links apps in the chat to you: the reader (open_reader: the user highlights a passage and asks; your answer shows in the margin) and apps you write (open_app; first read_recipe {"name": "custom-apps"}). You act only during a turn, so keep a watcher armed.

1. open_reader {"markdown": "..."} ${source}. It returns channel_id and watch_command.
2. Run watch_command, \`${watchCommand("<channel_id>", { where })}\`, as a background command (Claude Code: Bash, run_in_background: true). It exits when the app sends you something.
3. Then poll_agent_messages {"channel_id": "<channel_id>"} and reply to each message:
   - ready: notify_ui {"channel_id": "<channel_id>", "event": "hello", "data": {}}
   - ask: notify_ui {"channel_id": "<channel_id>", "event": "answer", "data": {"thread_id": "<thread_id>", "text": "..."}}, short (the card is narrow).
4. Run the watcher again, every time, also when it exits 2 (30 min without mail).

No background commands? Poll with "wait_ms": 120000 instead. More (Monitor, /loop, hosts): read_recipe.`;
}
