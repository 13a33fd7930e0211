/**
 * `backchannel web`: the browser host (web/host.ts) in the foreground, with the open
 * channels and their links; `--stop` ends the one running in the background; `--list`
 * only lists; `--background` is what servers start (server/browser-host.ts);
 * `--playground` is the page with its agent panel (`npm start`).
 */
import { resolve } from "node:path";
import { resolveDataDir } from "../core/paths.js";
import { optionsNpmKept, parseCommandLine, usageError } from "./args.js";
import { describeLocation, type StoreLocation, storeLocationFromEnv } from "../store/open.js";

/** How long the background host lives unused. */
const BACKGROUND_IDLE_MINUTES = 120;

/** The usage text of this command. */
export const USAGE = `Usage: backchannel web [--port N] [--list | --stop] [--idle-minutes M]
       backchannel web --playground [--port N] [--home DIR]

Shows the apps your agent opens (the reader, apps it writes) in your browser, for
agents whose host shows none (Claude Code, Codex, Gemini CLI in a terminal): their
open_reader answers with a link to this page. A server starts it by itself the first
time it is needed, in the background, and it ends after ${BACKGROUND_IDLE_MINUTES} minutes unused. This command
runs it in the foreground instead, and lists the open channels with their links.

Open a link, not the bare address: each carries a key, which the browser exchanges for
a session cookie (the key then leaves the address bar). It listens on 127.0.0.1 only,
and refuses other sites' pages and other users.

Options:
  --port N          the port (default: the one it had last time, when free)
  --list            list the open channels with their links, and exit
  --stop            stop the browser host running in the background, and exit
  --idle-minutes M  end after M minutes unused (default: never; ${BACKGROUND_IDLE_MINUTES} with --background)
  --background      what servers start: no end of its own but the idle one
  --playground      the playground instead: a sample document, and an agent panel in
                    which you play the agent, on port 5180 ($PORT), keeping its channels
                    in a data directory of its own (${resolveDataDir()}-playground)
  --home DIR        the playground's data directory instead
  --reader-html FILE  serve another build of the reader (to compare builds)
  -h, --help        show this help

From a clone, npm start runs the playground: options go after "--", as in
npm start -- --home DIR --port N (npm keeps those before it for itself).

The store is the one every command uses: BACKCHANNEL_STORE, BACKCHANNEL_STORE_FILE or
BACKCHANNEL_HOME, else the data directory ${resolveDataDir()}.

Exit codes: 0 done (or stopped), 1 a bad option or the host could not start (message on stderr).`;

const OPTIONS = {
  port: { type: "string" },
  list: { type: "boolean" },
  stop: { type: "boolean" },
  "idle-minutes": { type: "string" },
  background: { type: "boolean" },
  playground: { type: "boolean" },
  home: { type: "string" },
  "reader-html": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs the command with `args` (after its name); resolves to the exit code, -1 while the host runs. */
export async function run(args: string[]): Promise<number> {
  const command = "backchannel web";
  // `npm start --home DIR` gives npm the option and this command the bare DIR: say how to pass it before a word is refused.
  // A host a server starts (--background) inherits its npm settings, if any, from whatever ran that server.
  const kept = args.includes("--background") ? [] : optionsNpmKept(OPTIONS, process.env);
  if (kept.length > 0) {
    const event = process.env.npm_lifecycle_event;
    const script = event === "start" ? "npm start" : `npm run ${event}`;
    const named = kept.map(({ option, meant }) => (meant ? `${option} (did you mean ${meant}?)` : option));
    throw usageError(
      command,
      `npm kept ${named.join(" and ")} for itself (options before "--" are npm's own), so this command never got ` +
        `${kept.length > 1 ? "them" : "it"}; write options after "--", as in: ${script} -- --home DIR --port N`,
    );
  }
  const { values } = parseCommandLine(command, args, { options: OPTIONS });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = values.port ?? (values.playground ? (process.env.PORT ?? "5180") : undefined);
  if (port !== undefined && !/^\d{1,5}$/.test(port))
    throw usageError(command, `--port takes a port number (0: any free one), not ${JSON.stringify(port)}`);
  if (port !== undefined && Number(port) > 65535) throw usageError(command, `--port takes a port number up to 65535, not ${port}`);
  const idle = values["idle-minutes"] ?? (values.background ? String(BACKGROUND_IDLE_MINUTES) : undefined);
  if (idle !== undefined && !/^\d+(\.\d+)?$/.test(idle))
    throw usageError(command, `--idle-minutes takes a number of minutes, not ${JSON.stringify(idle)}`);
  const modes = (["list", "stop", "background", "playground"] as const).filter((name) => values[name]);
  if (modes.length > 1) throw usageError(command, `--${modes[0]} and --${modes[1]} do not go together`);
  if (!values.playground && (values.home !== undefined || values["reader-html"] !== undefined))
    throw usageError(
      command,
      `${values.home !== undefined ? "--home" : "--reader-html"} goes with --playground (the host uses the store every command uses)`,
    );

  const { location, own } = values.playground ? playgroundLocation(values.home) : { location: storeLocationFromEnv(), own: false };
  const { runningBrowserHost, browserHostFiles, browserHostLink, browserHostSecret } = await import("../core/browser-host.js");
  const { browserDataDir, browserStoreKey } = await import("../server/browser-host.js");
  const dataDir = browserDataDir(location);
  const files = browserHostFiles(dataDir, browserStoreKey(location));
  const running = values.playground ? undefined : runningBrowserHost(dataDir, files);
  const out = (line: string) => process.stdout.write(`${line}\n`);

  if (values.stop) {
    if (!running) {
      out(`No browser host runs for ${describeLocation(location)}.`);
      return 0;
    }
    process.kill(running.pid, "SIGTERM");
    for (let waited = 0; runningBrowserHost(dataDir, files) && waited < 10_000; waited += 100) await new Promise((wake) => setTimeout(wake, 100));
    out(`Stopped the browser host at ${running.url} (pid ${running.pid}).`);
    return 0;
  }
  if (values.list || running) {
    const secret = browserHostSecret(dataDir, files, (message) => process.stderr.write(`${command}: ${message}\n`));
    if (running)
      out(`The browser host of ${describeLocation(location)} runs at ${running.url} (pid ${running.pid}); stop it with "backchannel web --stop".`);
    else out(`No browser host runs for ${describeLocation(location)}; "backchannel web" starts one (and the links below then work).`);
    const { openStore } = await import("../store/open.js");
    const { listOpenChannels } = await import("../web/channels.js");
    const opened = await openStore(location);
    try {
      printChannels(out, await listOpenChannels(opened.store), (id) => (running ? browserHostLink(running.url, secret, id) : undefined));
    } finally {
      await opened.close();
    }
    return 0;
  }

  const { startBrowserHost } = await import("../web/host.js");
  const host = await startBrowserHost({
    location: location,
    mode: values.playground ? "playground" : "host",
    ...(port !== undefined ? { port: Number(port) } : {}),
    ...(idle !== undefined ? { idleMs: Number(idle) * 60_000 } : {}),
    ...(values["reader-html"] ? { readerHtmlPath: resolve(values["reader-html"]) } : {}),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "EADDRINUSE") throw usageError(command, `port ${port} is taken; pass --port 0 for a free one`);
    throw error;
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void host.close());
  const { bannerLocation } = await import("../store/open.js");
  if (values.playground) {
    out(`backchannel playground: ${host.link()}`);
    const whose = own ? " (the playground's own; --home DIR or BACKCHANNEL_HOME to use another)" : "";
    process.stderr.write(`${bannerLocation(location)}${whose}; stop with Ctrl+C\n`);
  } else {
    out(`backchannel web: ${host.link()}`);
    const { listOpenChannels } = await import("../web/channels.js");
    printChannels(out, await listOpenChannels(host.store), (id) => host.link(id));
    const ends = idle === undefined ? "Stop it with Ctrl+C." : `It ends after ${idle} minutes unused, or with Ctrl+C.`;
    process.stderr.write(`${bannerLocation(location)}. ${ends}\n`);
  }
  await host.closed;
  return 0;
}

/** Prints the open channels, each with its link when there is one. */
function printChannels(
  out: (line: string) => void,
  channels: { id: string; title: string | null }[],
  link: (id: string) => string | undefined,
): void {
  if (channels.length === 0) {
    out("No channel is open yet: ask your agent to open a document.");
    return;
  }
  out(`Open channels, newest first:`);
  for (const channel of channels) {
    out(`  ${channel.title ?? "(no title)"}  ${channel.id}`);
    const url = link(channel.id);
    if (url) out(`    ${url}`);
  }
}

/**
 * Where the playground keeps its channels: `home` (`--home`), else a store the
 * environment names explicitly, else (`own`) the playground's own data directory, the
 * default one's name with `-playground` after it, so that trying it leaves nothing among
 * a user's real channels.
 */
function playgroundLocation(home: string | undefined): { location: StoreLocation; own: boolean } {
  if (home !== undefined) return { location: { kind: "file", dataDir: resolve(home) }, own: false };
  const env = process.env;
  if (env.BACKCHANNEL_HOME || env.BACKCHANNEL_STORE?.trim() || env.BACKCHANNEL_STORE_FILE?.trim())
    return { location: storeLocationFromEnv(), own: false };
  return { location: { kind: "file", dataDir: `${resolveDataDir()}-playground` }, own: true };
}
