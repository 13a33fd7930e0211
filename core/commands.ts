/**
 * The exact shell command that runs the watcher, as the agent is told to run it. It
 * names this installation's own entry point, so it works wherever the agent's shell
 * starts, whether or not `backchannel` is on the PATH.
 */
import { CLI_ENTRY } from "./package.js";

/**
 * The command prefix that runs `backchannel`: `$BACKCHANNEL_COMMAND` when set (e.g.
 * `npx backchannel` for an installed package), else `node <this installation's cli.js>`.
 */
export function backchannelCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.BACKCHANNEL_COMMAND || `node ${quoteArg(CLI_ENTRY)}`;
}

/** The command that arms the watcher on `channelId` (exit mode, or follow mode with `follow`). */
export function watchCommand(channelId: string, follow = false): string {
  return `${backchannelCommand()} watch ${channelId}${follow ? " --follow" : ""}`;
}

/** Quotes a path for POSIX shells and cmd alike when it holds anything but safe characters. */
function quoteArg(arg: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, "\\$1")}"`;
}
