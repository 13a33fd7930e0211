/**
 * The server's `instructions`, sent at initialize: the one loop the agent needs. Kept
 * under 2 KB because Claude Code cuts longer ones, and short because the model pays for
 * them on every turn (with the tools, under 4,000 characters); everything else is in the recipes.
 *
 * A model is told only what it can do (./client-view.ts): how it is woken (a wake hook:
 * nothing to arm; a shell: the watcher as a background command; a chat page: only
 * the person's next message), and, when its client shows no apps, that the reader opens
 * from a link it gives the person.
 */

import { watchCommand } from "../core/commands.js";
import { type ClientView, FULL_VIEW } from "./client-view.js";

/**
 * The loop for the reader and agent-written apps, naming this installation's watcher
 * command exactly as `watch_command` will be, `where` included (the words naming the
 * store, see `watchCommand`; default none). `readLocalFiles`: whether `open_reader` takes
 * a `path` here (stdio); the instructions offer only what works on the transport.
 * `client`: what the client can do (default: everything, a shell).
 */
export function instructions(readLocalFiles: boolean, where: readonly string[] = [], client: ClientView = FULL_VIEW): string {
  const source = readLocalFiles ? '(or "text", or "path")' : '(or "text")';
  const link = client.showsApps
    ? ""
    : " This client shows no apps: open_reader and open_app return a link (reader_url, app_url); give the person that link.";
  const intro = `backchannel links apps${client.showsApps ? " in the chat" : ""} to you: the reader (open_reader: the user asks about a passage; your answer shows beside it) and apps you write (open_app; read_recipe {"name": "custom-apps"} first).${link}`;
  const returns = (fields: string[]) => `It returns ${fields.length > 1 ? `${fields.slice(0, -1).join(", ")} and ${fields.at(-1)}` : fields[0]}.`;
  const url = client.showsApps ? [] : ["reader_url"];
  const reply = `reply to each message:
   - ready: notify_ui {"channel_id":"<channel_id>","event":"hello","data":{}}
   - ask: notify_ui {"channel_id":"<channel_id>","event":"answer","data":{"thread_id":"<thread_id>","text":"..."}}, short: the card is narrow.`;
  switch (client.wake) {
    case "hook":
      return `${intro} Arm nothing: backchannel's wake hook wakes you whenever the app sends something.

1. open_reader {"markdown": "..."} ${source}. ${returns(["channel_id", ...url])}
2. When woken with a message, ${reply} Pass "ack" as the wake text says.

More (apps, hosts): read_recipe.`;
    case "chat":
      return `${intro} You act only during a turn: the person's next message gives you one.

1. open_reader {"markdown": "..."} ${source}. ${returns(["channel_id", ...url])}
2. poll_agent_messages {"channel_id":"<channel_id>","wait_ms":120000} waits for the app; ${reply}
3. Poll again while the person reads; when a turn ends, the reader offers to put a question into the chat.

More: read_recipe.`;
    case "shell":
      return `${intro} You act only during a turn, so keep a watcher armed.

1. open_reader {"markdown": "..."} ${source}. ${returns(["channel_id", ...url, "watch_command"])}
2. Run watch_command (\`${watchCommand("<channel_id>", { where })}\`) in the background (Claude Code: Bash, run_in_background: true); it exits when the app sends.
3. Then poll_agent_messages {"channel_id":"<channel_id>"} and ${reply}
4. Run it again after every exit, exit 2 (no mail) too.

No background commands? Poll with "wait_ms":120000. More (Monitor, /loop): read_recipe.`;
  }
}
