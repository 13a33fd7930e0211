/**
 * The server's `instructions`, sent at initialize (under 2 KB: Claude Code cuts longer ones).
 */

import { backchannelCommand } from "./core/commands.js";

/** The loop the agent follows, naming this installation's watcher command. */
export const INSTRUCTIONS = `backchannel lets you talk with an app open in the chat, through a channel (an id).
- The app's messages wait in the channel's agent queue; you only act during a turn, so arm a watcher to be woken: run \`${backchannelCommand()} watch <channel_id>\` as a background command. It exits when a message waits.
- When it exits (or whenever you like), call poll_agent_messages {channel_id}. It returns the messages and clears them. Then arm the watcher again.
- Reply with notify_ui {channel_id, event, data}.
- In a single turn you can also wait: poll_agent_messages {channel_id, wait_ms: 60000}.`;
