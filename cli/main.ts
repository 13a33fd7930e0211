#!/usr/bin/env node
/**
 * The `backchannel` command: dispatches to one module per subcommand (./serve.ts,
 * ./watch.ts, …), each with its own usage. Subcommands are imported when they run, so
 * each loads only what it needs: `watch` and `statusline` must start fast and never
 * load the MCP SDK.
 */
import { THIS_INSTALLATION } from "../core/commands.js";
import { describeDefaultDataDir } from "../core/paths.js";

const USAGE = `backchannel: a live channel between an AI agent and an MCP App in its chat

Usage:
  backchannel [serve]                 run the MCP server on stdio (what hosts start)
  backchannel serve --http [--port N] run it over Streamable HTTP on 127.0.0.1
  backchannel watch <channel_id>      wait for the app's next message, then exit
  backchannel watch <channel_id> --url https://host/mcp   the same, through a remote server
  backchannel watch --session         wait for mail on any channel of this host session
  backchannel web                     the apps in your browser, for agents whose host shows none
  backchannel statusline              Claude Code status line: what waits on this session
  backchannel install statusline      put it into Claude Code's settings.json
  backchannel uninstall statusline    take it out again, restoring the previous one
  backchannel install hook            put the wake hook into settings.json (or use the plugin)
  backchannel install codex           add backchannel and its wake hook to Codex CLI (uninstall codex: undo)
  backchannel hook post-tool-use      Claude Code PostToolUse hook: one-line tool results
  backchannel hook stop               Claude Code wake hook (asyncRewake Stop): wakes the agent on mail
  backchannel hook permission-request the plugin's grant of its own tools, once a session
  backchannel hook after-agent        Gemini CLI wake hook (AfterAgent, in gemini-extension/)
  backchannel hook codex-stop         Codex CLI wake hook (Stop, from install codex)
  backchannel token add <principal>   a token for serve --http --auth tokens
  backchannel --version               print the version
  backchannel <command> --help        help for one command

Without backchannel on your PATH: "${THIS_INSTALLATION}" (this installation),
or "npx -y backchannel-mcp" once the package is published ("npx backchannel" is another package).

Data directory: $BACKCHANNEL_HOME, else ${describeDefaultDataDir()}
Channels across machines: BACKCHANNEL_STORE=redis://host:port (or serve --store), for every command`;

/** The commands, for the suggestion of the closest one. */
const COMMANDS = ["serve", "watch", "web", "statusline", "install", "uninstall", "hook", "token", "help"];

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      return (await import("./serve.js")).run(rest, "backchannel");
    case "serve":
      return (await import("./serve.js")).run(rest);
    case "watch":
      return (await import("./watch.js")).run(rest);
    case "web":
      return (await import("./web.js")).run(rest);
    case "statusline":
      return (await import("./statusline.js")).run(rest);
    case "install":
    case "uninstall":
      return (await import("./install.js")).run(command, rest);
    case "hook":
      return (await import("./hook.js")).run(rest);
    case "token":
      return (await import("./token.js")).run(rest);
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
    default: {
      const { closest, usageError } = await import("./args.js");
      if (command.startsWith("-")) {
        // Options first are serve's, the default command's (the usage's `backchannel [serve] [--store URL]`),
        // but a word near one of this command's own (--version) is meant for it.
        const serve = await import("./serve.js");
        const name = command.replace(/^--?/, "").split("=")[0]!;
        const own = Object.hasOwn(serve.OPTIONS, name) ? undefined : closest(name, ["help", "version"]);
        if (own !== undefined) throw usageError("backchannel", `unknown option ${command} (did you mean --${own}?)`);
        return serve.run(argv, "backchannel");
      }
      const near = closest(command, COMMANDS);
      const suggestion = near === undefined ? "" : ` (did you mean ${near}?)`;
      throw usageError("backchannel", `unknown command ${JSON.stringify(command)}${suggestion}`);
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a server that runs until its transport closes.
    if (code >= 0) process.exitCode = code;
  },
  (error: Error) => {
    // A command line a command cannot read: the message names the command and its --help (./args.ts).
    const usage = (error as { code?: unknown }).code === "INVALID_COMMAND_LINE";
    process.stderr.write(usage ? `${error.message}\n` : `backchannel: ${error.message}\n`);
    process.exitCode = 1;
  },
);
