/**
 * `backchannel watch <channel_id>`: the watcher (watcher/watch.ts). Loads no SDK: it must
 * start fast. With `--url`, the remote watcher (./watch-remote.ts), which asks a server over MCP.
 */
import { closeMatches, parseCommandLine } from "./args.js";
import { isChannelId } from "../core/ids.js";
import { describeLocation, openReader, type StoreLocation, storeLocationFromOptions, unusableLocation } from "../store/open.js";
import type { ChannelReader } from "../store/store.js";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel watch <channel_id> [--home DIR | --store URL | --store-file FILE | --url URL]
                         [--timeout S] [--follow] [--notify] [--allow-missing]
       backchannel watch --session [--timeout S]

Waits until the app has sent the agent a message on <channel_id>. Run it as a
background command: when it exits, call poll_agent_messages, then start it again.
It only reads the channel: it never takes or changes a message. A channel that does
not exist (a mistyped id, or another store than the server's) ends it at once (exit
1, naming the channels with close ids), unless --allow-missing says to wait for it.

--session: wait for a message on any channel this host session opened (Claude
Code: the session of $CLAUDE_PID), print what waits (the asks themselves) and exit
0; a message already announced to this session waits silently. One such watcher
runs per session: starting another ends this one (exit 3).

Where the channel is (at most one; the server's watch_command names it when the
agent's shell would not find it): by default BACKCHANNEL_STORE, BACKCHANNEL_STORE_FILE
or BACKCHANNEL_HOME, as for the server.
  --home DIR    the file store in the data directory DIR
  --store URL   the Redis store at URL (redis://[user@]host[:port][/db]); without a
                password in it, the one in $BACKCHANNEL_STORE for the same server is used
  --store-file FILE  the Redis store whose URL the file FILE holds
  --url URL     ask the backchannel server at this MCP endpoint (https://host/mcp)
                instead of reading the store: for an agent on another machine.
                The token, if the server wants one, comes from $BACKCHANNEL_TOKEN

Options:
  --session     watch every channel of this session instead of one
  --timeout S   give up after S seconds (default 1800)
  --follow      print one line per new message and keep going until the timeout
  --notify      also show a desktop notification (notify-send, osascript or a
                PowerShell toast; one note on stderr where none works)
  --allow-missing  wait for a channel that does not exist yet (one an app opens
                later, e.g. a fixed id watched before open_reader) instead of exiting 1
  -h, --help    show this help

Environment: BACKCHANNEL_STORE (a redis:// URL), BACKCHANNEL_STORE_FILE (a file that
holds one) or BACKCHANNEL_HOME, as the server's; with --url, BACKCHANNEL_TOKEN only.

Exit codes: 0 a message waits (one summary line on stdout), 2 timeout,
1 bad channel id, no such channel (without --allow-missing), unreadable data
directory or unreachable Redis, or with --url a bad URL, a server that cannot be
reached or refuses the token (message on stderr);
3 (--session) a newer session watcher took over, or the host process is gone.`;

/** Runs the command with `args` (after its name); resolves to the exit code. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine("backchannel watch", args, {
    allowPositionals: true,
    options: {
      timeout: { type: "string" },
      follow: { type: "boolean" },
      notify: { type: "boolean" },
      url: { type: "string" },
      home: { type: "string" },
      store: { type: "string" },
      "store-file": { type: "string" },
      session: { type: "boolean" },
      "allow-missing": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const where = whereOptions(values);
  if (where.length > 2) {
    process.stderr.write(`backchannel watch: give at most one of --home, --store, --store-file and --url\n\n${USAGE}\n`);
    return 1;
  }
  if (values.session) {
    if (positionals.length > 0 || where.length > 0 || values.follow || values.notify || values["allow-missing"]) {
      process.stderr.write(
        `backchannel watch: --session takes no channel id, --home, --store, --store-file, --url, --follow, --notify or --allow-missing\n\n${USAGE}\n`,
      );
      return 1;
    }
  } else if (positionals.length !== 1) {
    process.stderr.write(`backchannel watch: give exactly one channel id\n\n${USAGE}\n`);
    return 1;
  }
  const timeoutSeconds = values.timeout === undefined ? 1800 : Number(values.timeout);
  if (!(timeoutSeconds > 0 && Number.isFinite(timeoutSeconds))) {
    process.stderr.write(`backchannel watch: --timeout takes a number of seconds above 0, not ${JSON.stringify(values.timeout)}\n`);
    return 1;
  }
  if (values.session) return watchThisSession(timeoutSeconds * 1000);
  if (values.url !== undefined) {
    const { TOKEN_ENV_VAR, watchRemote } = await import("./watch-remote.js");
    return watchRemote({
      channelId: positionals[0]!,
      url: values.url,
      token: process.env[TOKEN_ENV_VAR] || undefined,
      timeoutMs: timeoutSeconds * 1000,
      follow: values.follow ?? false,
      notify: values.notify ?? false,
      allowMissing: values["allow-missing"] ?? false,
    });
  }
  let location: StoreLocation;
  try {
    location = storeLocationFromOptions({ home: values.home, store: values.store, storeFile: values["store-file"] });
  } catch (error) {
    process.stderr.write(`backchannel watch: ${(error as Error).message}\n`);
    return 1;
  }
  const problem = await unusableLocation(location);
  if (problem) {
    process.stderr.write(`backchannel watch: ${problem}\n`);
    return 1;
  }
  const { oneLine } = await import("../core/text.js");
  const note = (line: string) => process.stderr.write(`backchannel watch: ${oneLine(line)}\n`);
  const [{ watchChannel }, opened] = await Promise.all([import("../watcher/watch.js"), openReader(location, note)]);
  try {
    const missing = values["allow-missing"] ? undefined : await missingChannel(opened.reader, positionals[0]!, describeLocation(location));
    if (missing !== undefined) {
      const { oneLine } = await import("../core/text.js");
      process.stderr.write(`backchannel watch: ${oneLine(missing)}\n`);
      return 1;
    }
    return await watchChannel({
      channelId: positionals[0]!,
      reader: opened.reader,
      timeoutMs: timeoutSeconds * 1000,
      follow: values.follow ?? false,
      notify: values.notify ?? false,
      where,
    });
  } finally {
    await opened.close();
  }
}

/** How many channels with an id close to a missing one are named. */
const NAMED_CHANNELS = 3;

/**
 * What a person is told when `reader` (the store `where`) holds no channel `channelId`,
 * or `undefined` when it does. An invalid id, or a store that cannot be read, is left for
 * the watcher to report as it does.
 */
async function missingChannel(reader: ChannelReader, channelId: string, where: string): Promise<string | undefined> {
  if (!isChannelId(channelId) || (await reader.hasChannel(channelId).catch(() => true))) return undefined;
  const ids = (await reader.listChannels().catch(() => [])).map((channel) => channel.id);
  const near = closeMatches(channelId, ids).slice(0, NAMED_CHANNELS);
  const known =
    near.length > 0
      ? `Did you mean ${near.join(" or ")}? `
      : ids.length > 0
        ? `None of its ${ids.length} channel${ids.length === 1 ? " has" : "s have"} a close id. `
        : "It holds no channel at all. ";
  return (
    `no channel ${channelId} in ${where}. ${known}Give the channel_id that open_reader or open_app returned, and check that ` +
    "BACKCHANNEL_HOME or BACKCHANNEL_STORE is the server's; to wait for a channel an app opens later, add --allow-missing"
  );
}

/** The options naming the store, as words of a command line (two per option given), in the order of the usage text. */
function whereOptions(values: { home?: string; store?: string; "store-file"?: string; url?: string }): string[] {
  const words: string[] = [];
  for (const name of ["home", "store", "store-file", "url"] as const) {
    const value = values[name];
    if (value !== undefined) words.push(`--${name}`, value);
  }
  return words;
}

/** `watch --session`: 0 and the summary on stdout on mail, 2 on timeout, 3 when superseded or the host is gone, 1 on failure. */
async function watchThisSession(timeoutMs: number): Promise<number> {
  const { oneLine } = await import("../core/text.js");
  const { runSessionWatcher } = await import("../watcher/session-run.js");
  const note = (line: string) => process.stderr.write(`backchannel watch: ${oneLine(line)}\n`);
  const outcome = await runSessionWatcher({ timeoutMs, err: note });
  switch (outcome.kind) {
    case "mail":
      process.stdout.write(`${outcome.summary}\n`);
      return 0;
    case "timeout":
      process.stdout.write(`No message on this session's channels after ${timeoutMs / 1000} s.\n`);
      return 2;
    case "ended":
      note(outcome.reason);
      return 3;
    case "failed":
      note(outcome.reason);
      return 1;
  }
}
