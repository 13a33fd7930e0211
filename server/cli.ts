#!/usr/bin/env node
/**
 * The `backchannel` command. Each subcommand loads only what it needs: `watch` must
 * start fast and never load the MCP SDK, so the server is imported lazily.
 */
import { parseArgs } from "node:util";
import { resolveDataDir } from "./core/paths.js";

const USAGE = `backchannel: a live channel between an AI agent and an MCP App in its chat

Usage:
  backchannel [serve]                 run the MCP server on stdio (what hosts start)
  backchannel serve --http [--port N] run it over Streamable HTTP on 127.0.0.1
  backchannel watch <channel_id>      wait for the app's next message, then exit
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
  BACKCHANNEL_MAX_QUEUE_MESSAGES, …   limits (see server/core/limits.ts)`;

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

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case "serve":
      return serve(rest);
    case "watch":
      return watch(rest);
    case "-v":
    case "--version": {
      const { VERSION } = await import("./version.js");
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
    const { runHttpServer } = await import("./transports/http.js");
    await runHttpServer({ port, host: values.host });
    return -1;
  }
  if (values.port !== undefined || values.host !== undefined) {
    process.stderr.write("backchannel serve: --port and --host go with --http\n");
    return 1;
  }
  const { runStdioServer } = await import("./transports/stdio.js");
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
