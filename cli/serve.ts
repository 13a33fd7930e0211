/**
 * `backchannel serve`: the MCP server on stdio (what hosts start), or over Streamable HTTP.
 */
import { THIS_INSTALLATION } from "../core/commands.js";
import { callerErrorCode } from "../core/errors.js";
import { parseCommandLine, usageError } from "./args.js";
import type { HttpAuthSettings } from "../server/auth/http-auth.js";
import { isWakePath, WAKE_PATHS } from "../server/client-view.js";
import { STORE_ENV_VAR, type StoreLocation, storeLocationFromEnv } from "../store/open.js";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel [serve] [--store URL] [--claude-channel] [--wake W] [--apps] [--http [--port N] [--host H] [auth options]]

Runs the MCP server on stdin/stdout. stdout carries MCP only; notes go to stderr.
Add it to a host as the command "backchannel" when it is on your PATH, else as
"${THIS_INSTALLATION}" (this installation), or "npx -y backchannel-mcp"
once the package is published ("npx backchannel" is another package). See the README.

Options:
  --store URL   keep the channels in Redis at URL, redis://[user:password@]host[:port][/db]
                (rediss:// for TLS), shared by every server, watcher and status line
                given the same URL; the default is the file store in the data directory.
                Same as BACKCHANNEL_STORE=URL
  --claude-channel  push each question to Claude Code as a channel notification
                (experimental capability claude/channel; Claude Code must be started
                with --dangerously-load-development-channels server:<name>).
                Same as BACKCHANNEL_CLAUDE_CHANNEL=1. stdio only.
  --wake W      how the agent is woken, for what its instructions say: hook (the
                Claude Code plugin's wake hook: arm nothing; the plugin passes it),
                shell (a watcher it runs in the background), chat (only the person's
                messages: a chat page). Default: from the client's name (shell but for
                chat apps such as Claude Desktop)
  --apps        treat the client as one that shows MCP Apps, whatever it declares (for
                a bridge such as mcp-proxy, which does not pass its client's
                capabilities on). Without it, a client that does not declare the MCP
                Apps extension gets no app-only tool, and open_reader gives it a link
                to the reader in the browser instead
  --http        serve Streamable HTTP at http://127.0.0.1:<port>/mcp instead; only
                localhost Host and Origin headers are accepted (and the public URL's),
                and open_reader's path is off (the caller need not be you)
  --port N      the HTTP port (default 0: a free one, printed on stderr)
  --host H      the address to bind (default 127.0.0.1). An address other than a
                loopback one (127.0.0.1, ::1, localhost) needs --auth (or
                --insecure-no-auth) and --public-url

Authentication (with --http; each principal sees only its own channels):
  --auth tokens      bearer tokens made by "backchannel token add <principal>"
  --tokens FILE      the token file (default: tokens.json in the data directory)
  --auth oauth       OAuth 2.1 resource server: JWT access tokens of --issuer, for
                     --public-url (aud), with the scope "backchannel"
  --issuer URL       the authorization server's issuer identifier
  --jwks-url URL     its signing keys (default: the jwks_uri of its metadata,
                     <issuer>/.well-known/oauth-authorization-server, else
                     <issuer>/.well-known/openid-configuration)
  --public-url URL   the URL clients reach the server by, e.g.
                     https://backchannel.example.com/mcp: the tokens' resource, and the
                     Host and Origin accepted besides localhost
  --insecure-no-auth listen beyond loopback with no authentication: anyone who can
                     reach the port reads and writes every channel. A trusted network only

Environment:
  BACKCHANNEL_STORE                   a redis:// URL: the Redis store (see --store)
  BACKCHANNEL_STORE_FILE              a file holding that URL (keeps a password out of
                                      the watcher command the agent is handed)
  BACKCHANNEL_HOME                    the data directory shared by every process
  BACKCHANNEL_MAX_QUEUE_MESSAGES, …   limits (see the README)`;

/** The options of this command, as ./args.ts takes them. */
export const OPTIONS = {
  help: { type: "boolean", short: "h" },
  http: { type: "boolean" },
  port: { type: "string" },
  host: { type: "string" },
  "claude-channel": { type: "boolean" },
  store: { type: "string" },
  auth: { type: "string" },
  tokens: { type: "string" },
  issuer: { type: "string" },
  "jwks-url": { type: "string" },
  "public-url": { type: "string" },
  "insecure-no-auth": { type: "boolean" },
  wake: { type: "string" },
  apps: { type: "boolean" },
} as const;

/**
 * Runs the command with `args` (after its name); resolves to the exit code, -1 for a
 * server that keeps running. `command` is what the user typed to get here: `backchannel`
 * alone also serves (the default command), and its errors then name `backchannel --help`.
 * @throws UsageError (./args.ts) for a command line it cannot read.
 */
export async function run(args: string[], command = "backchannel serve"): Promise<number> {
  const { values } = parseCommandLine(command, args, { options: OPTIONS });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const claudeChannel = values["claude-channel"] ?? isTrue(process.env.BACKCHANNEL_CLAUDE_CHANNEL);
  const wake = values.wake;
  if (wake !== undefined && !isWakePath(wake)) throw usageError(command, `--wake takes ${WAKE_PATHS.join(", ")}, not ${JSON.stringify(wake)}`);
  const client = { wake, apps: values.apps };
  let location: StoreLocation;
  try {
    location = storeLocationFromEnv(process.env, values.store ?? process.env[STORE_ENV_VAR]);
  } catch (error) {
    process.stderr.write(`backchannel serve: ${(error as Error).message}\n`);
    return 1;
  }
  if (values.http) {
    if (claudeChannel) {
      throw usageError(command, "--claude-channel works on stdio only (Claude Code channels are stdio servers)");
    }
    const port = Number(values.port ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw usageError(command, `--port takes a port number from 0 to 65535, not ${JSON.stringify(values.port)}`);
    }
    // Refused before the server (and the SDK) is loaded.
    const { resolveHttpAuth } = await import("../server/auth/http-auth.js");
    let settings: HttpAuthSettings;
    try {
      settings = resolveHttpAuth({
        host: values.host,
        auth: values.auth,
        tokens: values.tokens,
        issuer: values.issuer,
        jwksUrl: values["jwks-url"],
        publicUrl: values["public-url"],
        insecureNoAuth: values["insecure-no-auth"],
      });
    } catch (error) {
      process.stderr.write(`backchannel serve: ${(error as Error).message}\n`);
      return 1;
    }
    const { runHttpServer } = await import("../server/transports/http.js");
    try {
      await runHttpServer({ port, host: values.host, location, ...settings, ...client });
    } catch (error) {
      if (callerErrorCode(error) === undefined) throw error;
      process.stderr.write(`backchannel serve: ${(error as Error).message}\n`);
      return 1;
    }
    return -1;
  }
  const httpOnly = ["port", "host", "auth", "tokens", "issuer", "jwks-url", "public-url", "insecure-no-auth"] as const;
  const misplaced = httpOnly.filter((name) => values[name] !== undefined);
  if (misplaced.length > 0) {
    const names = misplaced.map((name) => `--${name}`).join(", ");
    throw usageError(command, `${names} ${misplaced.length === 1 ? "goes" : "go"} with --http (add --http to serve over HTTP)`);
  }
  const { runStdioServer } = await import("../server/transports/stdio.js");
  await runStdioServer({ claudeChannel, location, ...client });
  return -1;
}

/** Whether an on/off environment variable is on (`1`, `true`, `yes`, `on`). */
function isTrue(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}
