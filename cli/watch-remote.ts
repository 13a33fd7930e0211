/**
 * `backchannel watch <channel_id> --url https://host/mcp`: the watcher for an agent on
 * another machine than the store. It asks a remote backchannel server over MCP
 * (Streamable HTTP, the SDK's client) instead of reading the store, so it holds no
 * store credentials, only the bearer token in `$BACKCHANNEL_TOKEN`.
 *
 * It prints the same lines and exits with the same codes as the local watcher
 * (watcher/watch.ts). Waking is "the agent's queue has mail": it calls
 * `watch_agent_messages`, which peeks and waits without taking anything, for at most
 * MAX_REMOTE_WAIT_MS per call (remote hosts and proxies end a request near 60 s), and
 * loops until its timeout.
 *
 * A server it cannot reach or that refuses it at the start is an error (exit 1, with
 * what to do); once watching, a failed call (a replica restarting, a proxy's 502) is
 * said once on stderr and retried, as the local watcher does for a store that is away.
 */
import { APP_SIDE_EXTENSIONS } from "../protocol/client-capabilities.js";
import { Client, SdkError, SdkErrorCode, SdkHttpError, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { z } from "zod";
import { watchCommand } from "../core/commands.js";
import { EVENT_PATTERN, isChannelId } from "../core/ids.js";
import { MAX_REMOTE_WAIT_MS } from "../core/limits.js";
import { VERSION } from "../core/package.js";
import { oneLine } from "../core/text.js";
import { afterSeqIn, EPOCH_PATTERN, type SeqMark } from "../protocol/epoch.js";
import type { QueueMessage } from "../protocol/message.js";
import { toolErrorCode } from "../protocol/tool-error.js";
import { WATCH_TOOL } from "../server/tools/watch-tools.js";
import { desktopNotifier } from "../watcher/notify.js";
import { AnswerTooLargeError, boundedFetch } from "./bounded-fetch.js";
import { followLines, invalidChannelMessage, notificationBody, summaryLine, timeoutLine, WATCH_EXIT, type WatchBehaviour } from "../watcher/watch.js";

/** The environment variable that holds the bearer token the remote watcher sends. */
export const TOKEN_ENV_VAR = "BACKCHANNEL_TOKEN";

/** Options of {@link watchRemote}. */
export interface RemoteWatchOptions extends WatchBehaviour {
  /** The channel to watch; checked before anything is sent. */
  channelId: string;
  /** The server's MCP endpoint, as the user gave it (checked here). */
  url: string;
  /** The bearer token; none sends no Authorization header. */
  token?: string;
  /** After a failed call while watching, wait this long before the next. Default 1,000 ms. */
  retryMs?: number;
  /** Wait for a channel the server does not hold yet, instead of ending at once (exit 1). Default false. */
  allowMissing?: boolean;
}

/** A failure that ends the watcher: its message says what to do. */
class RemoteWatchError extends Error {}

/**
 * The largest answer the watcher reads: a `watch_agent_messages` answer lists at most
 * one agent queue (8 MiB by default, JSON-escaped in the event's text and again in its
 * structured copy), so twice that is room enough for any backchannel server.
 */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** How long after its timeout the watcher gives up on a call that is still running (a server that drips). */
const DEADLINE_GRACE_MS = 1000;

/**
 * What the watcher accepts as a server's answer. The server is not trusted: an event
 * name reaches the terminal, so it must be one (no escapes, no 5 MB line), and a seq
 * must be one the watcher can order by.
 */
const answerSchema = z.object({
  messages: z.array(z.object({ seq: z.number().int().positive(), event: z.string().regex(EVENT_PATTERN), data: z.unknown(), ts: z.string() })),
  epoch: z.string().regex(EPOCH_PATTERN).optional(),
  title: z.string().optional(),
  exists: z.boolean().optional(),
});

/**
 * Watches the agent queue of a channel on a remote server.
 * @returns the exit code: 0 when a message waits (exit mode), 2 on timeout, 1 on a bad
 *   channel id or URL, a server that cannot be reached or refuses the token at the
 *   start, or one that refuses it later. Never throws.
 */
export async function watchRemote(options: RemoteWatchOptions): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`backchannel watch: ${oneLine(line)}\n`));
  const { channelId, token, follow = false, notify = false, timeoutMs = 1_800_000, retryMs = 1000, allowMissing = false } = options;
  if (!isChannelId(channelId)) {
    err(invalidChannelMessage(channelId));
    return WATCH_EXIT.error;
  }
  let url: URL;
  try {
    url = endpointUrl(options.url, token !== undefined);
  } catch (error) {
    err((error as Error).message);
    return WATCH_EXIT.error;
  }
  const deadline = Date.now() + timeoutMs;
  const notifier = notify ? desktopNotifier(err) : undefined;
  // It calls watch_agent_messages, an app-only tool: it says so, or the server would not offer it.
  const client = new Client({ name: "backchannel-watch", version: VERSION }, { capabilities: { extensions: APP_SIDE_EXTENSIONS } });
  const transport = new StreamableHTTPClientTransport(url, {
    ...(token === undefined ? {} : { authProvider: { token: async () => token } }),
    // An answer past the limit ends the watcher: the SDK would drop the stream and wait on.
    fetch: boundedFetch(MAX_ANSWER_BYTES, (error) => {
      tooLarge = error;
      void client.close().catch(() => undefined);
    }),
  });
  let tooLarge: AnswerTooLargeError | undefined;
  // The watcher keeps its own timeout, whatever the server does: a call still running
  // then (a server that drips, or never ends its answer) is ended by closing the client.
  let timedOut = false;
  let title: string | undefined;
  const overall = setTimeout(() => {
    timedOut = true;
    void client.close().catch(() => undefined);
  }, timeoutMs + DEADLINE_GRACE_MS);
  try {
    await client.connect(transport);
    await assertHasWatchTool(client);
    // The last seq told of, in its queue's epoch (an older server gives none): a queue that starts again is told from its start.
    let told: SeqMark = { seq: 0, epoch: undefined };
    let lastProblem = "";
    let first = true;
    for (;;) {
      // The first call does not wait, so that "waiting" is said at once, as the local watcher says it.
      const waitMs = first ? 0 : Math.max(0, Math.min(deadline - Date.now(), MAX_REMOTE_WAIT_MS));
      let messages: QueueMessage[] | undefined;
      let epoch: string | undefined;
      const calledAt = Date.now();
      try {
        // The first call also asks for the channel's title, for the re-arm line at the timeout.
        const answer = await watchOnce(client, channelId, told, waitMs, first);
        ({ messages, epoch } = answer);
        if (first) title = answer.title;
        // An older server does not say whether the channel exists: then the watcher waits, as it always did.
        if (first && answer.exists === false && messages.length === 0) {
          if (!allowMissing) throw new RemoteWatchError(missingRemoteChannel(url, channelId, token !== undefined));
          err(`no channel ${channelId} at ${url} yet; waiting for an app to open it`);
        }
        lastProblem = "";
        // A server that answers at once with nothing new (it ignores after_seq) is asked again only after a pause.
        if (messages.length === 0 && !first && Date.now() - calledAt < waitMs / 2) await pause(Math.min(retryMs, deadline - Date.now()));
      } catch (error) {
        if (timedOut) break;
        if (tooLarge) throw tooLarge;
        // At the start, a server that cannot be reached is a wrong URL or a server down: say so and stop.
        if (isRefusal(error) || (first && !(error instanceof ToolCallError))) throw error;
        // Said once per kind of failure: a dying server answers ECONNRESET, then ECONNREFUSED.
        const problem = failureKind(error);
        if (problem !== lastProblem) err(`${describeFailure(error, url, token !== undefined)}; still watching`);
        lastProblem = problem;
        await pause(Math.min(retryMs, deadline - Date.now()));
      }
      if (messages !== undefined && messages.length > 0) {
        for (const line of follow ? followLines(channelId, messages) : [summaryLine(channelId, messages)]) out(line);
        if (notifier) await notifier.notify("backchannel", notificationBody(messages));
        if (!follow) return WATCH_EXIT.message;
        told = { seq: messages.at(-1)!.seq, epoch };
      }
      if (first) err(`waiting for messages on ${channelId} at ${url} (timeout ${timeoutMs / 1000} s)`);
      first = false;
      if (Date.now() >= deadline) break;
    }
  } catch (caught) {
    const error = tooLarge ?? caught;
    if (!timedOut) {
      err(describeFailure(error, url, token !== undefined));
      return WATCH_EXIT.error;
    }
  } finally {
    clearTimeout(overall);
    await client.close().catch(() => undefined);
  }
  out(timeoutLine(channelId, timeoutMs, watchCommand(channelId, { follow, where: ["--url", url.href] }), title));
  return WATCH_EXIT.timeout;
}

/**
 * `text` as the URL of an MCP endpoint: http or https, with a host. Plain http is
 * accepted for a loopback host only when a token goes with it (the token would
 * otherwise cross the network in the clear).
 * @throws RemoteWatchError saying what to give instead.
 */
export function endpointUrl(text: string, withToken: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RemoteWatchError(
      `--url ${JSON.stringify(text)} is not a URL: give the server's MCP endpoint, e.g. https://backchannel.example.com/mcp`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new RemoteWatchError(
      `--url ${JSON.stringify(text)} is not an http(s) URL: give the server's MCP endpoint, e.g. https://backchannel.example.com/mcp`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new RemoteWatchError(`--url must not hold a user or password: put the token in $${TOKEN_ENV_VAR} instead`);
  }
  if (url.protocol === "http:" && withToken && !isLoopback(url.hostname)) {
    throw new RemoteWatchError(`--url ${url.href} is plain http to another machine: the token would cross the network in the clear; use https://`);
  }
  return url;
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * One `watch_agent_messages` call: the messages above `after` (all of them when the
 * queue's epoch is not `after.epoch`), after waiting up to `waitMs` for one, with the
 * queue's epoch, and with `withTitle` the channel's title when the server gives one (an
 * older server gives neither epoch nor title).
 */
async function watchOnce(
  client: Client,
  channelId: string,
  after: SeqMark,
  waitMs: number,
  withTitle: boolean,
): Promise<{ messages: QueueMessage[]; epoch?: string; title?: string; exists?: boolean }> {
  const since = { after_seq: after.seq, ...(after.epoch === undefined ? {} : { epoch: after.epoch }) };
  const result = await client.callTool(
    { name: WATCH_TOOL, arguments: { channel_id: channelId, ...since, wait_ms: waitMs, ...(withTitle ? { with_title: true } : {}) } },
    // The server answers by the end of the wait; the margin covers a slow network.
    { timeout: waitMs + 20_000 },
  );
  if (result.isError) {
    const text = (result.content as { type: string; text?: string }[]).map((part) => part.text ?? "").join(" ");
    throw new ToolCallError(text, toolErrorCode(result.structuredContent));
  }
  const parsed = answerSchema.safeParse(result.structuredContent);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ToolCallError(`the server's answer is not a list of messages (${issue?.path.join(".")}: ${issue?.message ?? "bad shape"})`, undefined);
  }
  // Only what is new, in order: a server that ignores after_seq must not make --follow repeat itself.
  const { epoch, title } = parsed.data;
  const afterSeq = epoch === undefined ? after.seq : afterSeqIn(epoch, after);
  const messages = (parsed.data.messages as QueueMessage[]).filter((message) => message.seq > afterSeq).sort((a, b) => a.seq - b.seq);
  return { messages, epoch, title, exists: parsed.data.exists };
}

/** What a person is told when the server holds no channel `channelId` (for the token's principal, when a token is sent). */
function missingRemoteChannel(url: URL, channelId: string, withToken: boolean): string {
  const whose = withToken ? " for the token in $" + TOKEN_ENV_VAR : "";
  return (
    `${url.href} has no channel ${channelId}${whose}. Give the channel_id that open_reader or open_app returned on that server; ` +
    "to wait for a channel an app opens later, add --allow-missing"
  );
}

/** Waits `ms` (nothing when it is not above 0). */
function pause(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/**
 * Refuses a server that does not offer {@link WATCH_TOOL} (an older backchannel, or
 * another MCP server): read from its tool list, never from an error's text.
 * @throws RemoteWatchError saying to upgrade it.
 */
async function assertHasWatchTool(client: Client): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    if (page.tools.some((tool) => tool.name === WATCH_TOOL)) return;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  throw new RemoteWatchError(
    `the server has no ${WATCH_TOOL} tool: it runs an older backchannel, or is another MCP server; upgrade it to use the remote watcher`,
  );
}

/** A tool call that the server answered with an error (e.g. its store is away); `code` is the error's (protocol/tool-error.ts) when it gave one. */
class ToolCallError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Whether `error` means the server will not let us in (so retrying cannot help). */
function isRefusal(error: unknown): boolean {
  if (error instanceof RemoteWatchError || error instanceof UnauthorizedError) return true;
  return error instanceof SdkHttpError && (error.status === 401 || error.status === 403 || error.status === 404);
}

/** The kind of a failure while watching: a tool error's code (else its text), an HTTP status, or "unreachable". */
function failureKind(error: unknown): string {
  if (error instanceof ToolCallError) return error.code ?? error.message;
  if (error instanceof SdkHttpError) return `HTTP ${error.status}`;
  return "unreachable";
}

/** What went wrong, for a person: the cause and what to do. */
function describeFailure(error: unknown, url: URL, withToken: boolean): string {
  if (error instanceof RemoteWatchError || error instanceof ToolCallError) return error.message;
  if (error instanceof AnswerTooLargeError) return `${url.href}: ${error.message}`;
  const status = error instanceof SdkHttpError ? error.status : undefined;
  if (error instanceof UnauthorizedError || status === 401) {
    return withToken
      ? `${url.href} refused the token in $${TOKEN_ENV_VAR} (401): it is unknown, revoked or expired; get a new one (on the server: backchannel token add <you>)`
      : `${url.href} wants a token (401): set $${TOKEN_ENV_VAR} to one (on the server: backchannel token add <you>)`;
  }
  if (status === 403)
    return `${url.href} refused the request (403): the token lacks the server's scope, or the server does not accept this host name (see its --public-url)`;
  if (status === 404) return `nothing serves MCP at ${url.href} (404): give the server's MCP endpoint, usually ending in /mcp`;
  if (status !== undefined) return `${url.href} answered HTTP ${status}: the server or its proxy is failing; check its logs`;
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return `${url.href} did not answer in time: check that the server runs and that no proxy holds the response back (proxy_buffering off)`;
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const reason = cause?.code ?? cause?.message ?? (error as Error | undefined)?.message ?? String(error);
  return `cannot reach ${url.href} (${reason}): check the URL and that the server runs`;
}
