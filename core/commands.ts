/**
 * The exact shell commands that run backchannel, as the agent and the host are told to
 * run them, and the one quoting rule for them. They name this installation's own entry
 * point, so they work wherever the agent's shell starts, whether or not `backchannel`
 * is on the PATH.
 */
import { CLI_ENTRY } from "./package.js";

/** The command that runs this installation's `backchannel`, whatever `$BACKCHANNEL_COMMAND` says: `node <its cli.js>`. */
export const THIS_INSTALLATION = `node ${shellQuote(CLI_ENTRY)}`;

/**
 * The command prefix that runs `backchannel`: `$BACKCHANNEL_COMMAND` when set (e.g.
 * `npx -y backchannel-mcp`, the published package), else `node <this installation's cli.js>`.
 */
export function backchannelCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.BACKCHANNEL_COMMAND || THIS_INSTALLATION;
}

/** Options of {@link watchCommand}. */
export interface WatchCommandOptions {
  /** Follow mode (`--follow`) instead of exit mode. Default false. */
  follow?: boolean;
  /**
   * The words that tell the watcher where the store is, e.g. `["--url", endpoint]` or
   * `["--store-file", path]` (each quoted here). Default none: the watcher's own
   * environment chooses, which is right only when it is the server's.
   */
  where?: readonly string[];
  /** The command prefix. Default: {@link backchannelCommand}. */
  command?: string;
}

/** The command that arms the watcher on `channelId`, for the store `options.where` names. */
export function watchCommand(channelId: string, options: WatchCommandOptions = {}): string {
  const where = (options.where ?? []).map((word) => ` ${shellQuote(word)}`).join("");
  return `${options.command ?? backchannelCommand()} watch ${channelId}${options.follow ? " --follow" : ""}${where}`;
}

/**
 * `arg` as one word of a command line for the shell that runs it: `sh` (single quotes
 * when it holds anything but safe characters), or `cmd` on Windows (double quotes).
 * {@link shellWords} reads either back.
 */
export function shellQuote(arg: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return /^[\w@%+=:,./\\-]+$/.test(arg) ? arg : `"${arg}"`;
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Splits a command line as {@link backchannelCommand} writes it into words: blanks
 * separate, single and double quotes group, and inside double quotes `\\` escapes
 * `" \\ $` and a backtick. Elsewhere a backslash escapes only a quote; it is kept
 * before anything else, as in a Windows path.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i]!;
    if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
    } else if (char === '"') {
      word ??= "";
      for (i += 1; i < line.length && line[i] !== '"'; i += 1) {
        // Inside double quotes a backslash escapes only " \ $ and `.
        if (line[i] === "\\" && /["\\$`]/.test(line[i + 1] ?? "")) i += 1;
        word += line[i];
      }
    } else if (char === "\\" && /['"]/.test(line[i + 1] ?? "")) {
      // An escaped quote (as in sh's 'it'\''s') is the quote itself.
      word = (word ?? "") + line[i + 1];
      i += 1;
    } else {
      word = (word ?? "") + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
