#!/usr/bin/env node
/**
 * The `backchannel` command. Each subcommand loads only what it needs: `watch` must
 * start fast and never load the MCP SDK, so the server is imported lazily.
 */
import { parseArgs } from "node:util";
import { resolveDataDir } from "../core/paths.js";

const USAGE = `backchannel: a live channel between an AI agent and an MCP App in its chat

Usage:
  backchannel [serve]                 run the MCP server on stdio (what hosts start)
  backchannel serve --http [--port N] run it over Streamable HTTP on 127.0.0.1
  backchannel watch <channel_id>      wait for the app's next message, then exit
  backchannel statusline              Claude Code status line: what waits on this session
  backchannel install statusline      put it into Claude Code's settings.json
  backchannel uninstall statusline    take it out again, restoring the previous one
  backchannel hook post-tool-use      Claude Code PostToolUse hook: one-line tool results
  backchannel --version               print the version
  backchannel <command> --help        help for one command

Data directory: $BACKCHANNEL_HOME, else ${resolveDataDir()}`;

const SERVE_USAGE = `Usage: backchannel [serve] [--claude-channel] [--http [--port N] [--host H]]

Runs the MCP server on stdin/stdout. stdout carries MCP only; notes go to stderr.
Add it to a host as the command "npx backchannel" (see the README).

Options:
  --claude-channel  push each question to Claude Code as a channel notification
                (experimental capability claude/channel; Claude Code must be started
                with --dangerously-load-development-channels server:<name>).
                Same as BACKCHANNEL_CLAUDE_CHANNEL=1. stdio only.
  --http        serve Streamable HTTP at http://127.0.0.1:<port>/mcp instead; only
                localhost Host and Origin headers are accepted, and open_reader's
                path is off (the caller need not be you)
  --port N      the HTTP port (default 0: a free one, printed on stderr)
  --host H      the address to bind (default 127.0.0.1)

Environment:
  BACKCHANNEL_HOME                    the data directory shared by every process
  BACKCHANNEL_MAX_QUEUE_MESSAGES, …   limits (see the README)`;

const WATCH_USAGE = `Usage: backchannel watch <channel_id> [--timeout S] [--follow] [--notify]

Waits until the app has sent the agent a message on <channel_id>. Run it as a
background command: when it exits, call poll_agent_messages, then start it again.
It only reads the channel's files: it never takes or changes a message.

Options:
  --timeout S   give up after S seconds (default 1800)
  --follow      print one line per new message and keep going until the timeout
  --notify      also show a desktop notification (notify-send, osascript or a
                PowerShell toast; one note on stderr where none works)
  -h, --help    show this help

Exit codes: 0 a message waits (one summary line on stdout), 2 timeout,
1 bad channel id or unreadable data directory (message on stderr).`;

const STATUSLINE_USAGE = `Usage: backchannel statusline [--stash FILE]

Claude Code's status line command: prints what waits for the agent on this session's
channels, e.g. "reader: 2 questions", and the session's wall while it is up; prints
nothing when there is nothing to show. The session is CLAUDE_PID, else the topmost
ancestor process named claude. Reads the host's JSON on stdin. Always exits 0.
Set it up with "backchannel install statusline".

Options:
  --stash FILE  the status line this one replaced (written by install): it runs first,
                through the shell with the same stdin and at most 2 s, and its last
                line gets " | " and ours appended
  -h, --help    show this help`;

const INSTALL_USAGE = `Usage: backchannel install statusline [--settings FILE]
       backchannel uninstall statusline [--settings FILE]

install: makes "backchannel statusline" Claude Code's status line. The statusLine it
replaces is kept in backchannel-statusline.<settings file name> next to the settings
file, and keeps showing first; padding and refreshInterval (default 5 s) are kept.
Installing twice changes nothing.
uninstall: puts the kept statusLine back exactly (or removes the key if there was
none) and deletes the kept copy; refuses when the statusLine was changed since.

Options:
  --settings FILE  the settings file (default $CLAUDE_CONFIG_DIR/settings.json, else
                   ~/.claude/settings.json; e.g. .claude/settings.json for a project)
  -h, --help       show this help

Exit codes: 0 done (or nothing to do), 1 refused or a settings file that is not a
JSON object (left as it is; message on stderr).`;

const HOOK_USAGE = `Usage: backchannel hook post-tool-use

Claude Code's PostToolUse hook for backchannel's tools: the tool panel shows one line
of each result, and the model still gets a data tool's full result as additional
context. Reads the hook input on stdin; prints the hook output, or nothing for other
tools, error results and results over 9,000 characters. Always exits 0.

Add to settings.json (user or project):
  {"hooks":{"PostToolUse":[{"matcher":"mcp__backchannel__.*","hooks":[{"type":"command","command":"npx backchannel hook post-tool-use"}]}]}}
Use your server's name in the matcher if it is not "backchannel".

Options:
  -h, --help  show this help`;

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case "serve":
      return serve(rest);
    case "watch":
      return watch(rest);
    case "statusline":
      return statusline(rest);
    case "install":
    case "uninstall":
      return install(command, rest);
    case "hook":
      return hook(rest);
    case "-v":
    case "--version": {
      const { VERSION } = await import("../core/package.js");
      process.stdout.write(`${VERSION}\n`);
      return 0;
    }
    case "-h":
    case "--help":
    case "help":
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      process.stderr.write(`backchannel: unknown command ${JSON.stringify(command)}\n\n${USAGE}\n`);
      return 1;
  }
}

async function serve(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      help: { type: "boolean", short: "h" },
      http: { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      "claude-channel": { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(`${SERVE_USAGE}\n`);
    return 0;
  }
  const claudeChannel = values["claude-channel"] ?? isTrue(process.env.BACKCHANNEL_CLAUDE_CHANNEL);
  if (values.http) {
    if (claudeChannel) {
      process.stderr.write("backchannel serve: --claude-channel works on stdio only (Claude Code channels are stdio servers)\n");
      return 1;
    }
    const port = Number(values.port ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`backchannel serve: --port takes a port number from 0 to 65535, not ${JSON.stringify(values.port)}\n`);
      return 1;
    }
    const { runHttpServer } = await import("../server/transports/http.js");
    await runHttpServer({ port, host: values.host });
    return -1;
  }
  if (values.port !== undefined || values.host !== undefined) {
    process.stderr.write("backchannel serve: --port and --host go with --http\n");
    return 1;
  }
  const { runStdioServer } = await import("../server/transports/stdio.js");
  await runStdioServer({ claudeChannel });
  return -1;
}

/** Whether an on/off environment variable is on (`1`, `true`, `yes`, `on`). */
function isTrue(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

async function watch(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      timeout: { type: "string" },
      follow: { type: "boolean" },
      notify: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${WATCH_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`backchannel watch: give exactly one channel id\n\n${WATCH_USAGE}\n`);
    return 1;
  }
  const timeoutSeconds = values.timeout === undefined ? 1800 : Number(values.timeout);
  if (!(timeoutSeconds > 0 && Number.isFinite(timeoutSeconds))) {
    process.stderr.write(`backchannel watch: --timeout takes a number of seconds above 0, not ${JSON.stringify(values.timeout)}\n`);
    return 1;
  }
  const { watchChannel } = await import("../watcher/watch.js");
  return watchChannel({
    channelId: positionals[0]!,
    dataDir: resolveDataDir(),
    timeoutMs: timeoutSeconds * 1000,
    follow: values.follow ?? false,
    notify: values.notify ?? false,
  });
}

async function statusline(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      stash: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${STATUSLINE_USAGE}\n`);
    return 0;
  }
  const { runStatusline } = await import("../claude-code/statusline.js");
  return runStatusline({ dataDir: resolveDataDir(), stashPath: values.stash });
}

async function install(command: "install" | "uninstall", args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      settings: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${INSTALL_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "statusline") {
    const what = positionals.length === 0 ? "nothing" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel ${command}: can only ${command} "statusline", not ${what}\n\n${INSTALL_USAGE}\n`);
    return 1;
  }
  const [{ resolve }, { defaultSettingsPath }, { installStatusline, uninstallStatusline }] = await Promise.all([
    import("node:path"),
    import("../claude-code/settings-file.js"),
    import("../claude-code/install.js"),
  ]);
  const settingsPath = resolve(values.settings ?? defaultSettingsPath());
  const outcome = command === "install" ? installStatusline(settingsPath) : uninstallStatusline(settingsPath);
  if (outcome.ok) process.stdout.write(`${outcome.message}\n`);
  else process.stderr.write(`backchannel ${command} statusline: ${outcome.message}\n`);
  return outcome.ok ? 0 : 1;
}

async function hook(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`${HOOK_USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "post-tool-use") {
    const what = positionals.length === 0 ? "none" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel hook: the only hook is "post-tool-use", not ${what}\n\n${HOOK_USAGE}\n`);
    return 1;
  }
  const { runPostToolUseHook } = await import("../claude-code/hook.js");
  return runPostToolUseHook();
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a server that runs until its transport closes.
    if (code >= 0) process.exitCode = code;
  },
  (error: Error) => {
    const usage = (error as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS") ? " (see --help)" : "";
    process.stderr.write(`backchannel: ${error.message}${usage}\n`);
    process.exitCode = 1;
  },
);
