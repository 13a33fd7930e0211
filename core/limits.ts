/**
 * The limits of a channel, with their defaults. Every limit can be changed per store
 * (`new FileStore({ limits })`) or, for a whole process, through the environment
 * variable named next to it (see {@link limitsFromEnv}).
 */

/** All limits a store enforces. Sizes are bytes of UTF-8 JSON; times are milliseconds. */
export interface Limits {
  /** Largest JSON encoding of one message's `data`. Default 64 KiB. */
  maxMessageBytes: number;
  /** Most messages one queue holds. Default 1,000. */
  maxQueueMessages: number;
  /** Largest total JSON size of one queue's messages. Default 8 MiB. */
  maxQueueBytes: number;
  /** Largest total size one poll returns; the rest stays pending. Default 1 MiB. */
  maxBatchBytes: number;
  /** Largest JSON encoding of one per-channel state document (the reader's document, its threads). Default 4 MiB. */
  maxStateBytes: number;
  /** A channel untouched this long is removed. Default 7 days. */
  channelTtlMs: number;
  /**
   * A lock whose holder cannot be checked by its pid (another host or container, or no
   * record) and that nobody changed for this long is broken; a live holder of this
   * machine never is. Writers give up after three such periods. Default 5 s.
   */
  lockStaleMs: number;
  /** Longest `wait_ms` of `poll_agent_messages`. Default 300 s. */
  maxAgentWaitMs: number;
  /** Longest `wait_ms` of `poll_ui_messages`. Default 30 s. */
  maxUiWaitMs: number;
  /** Most channels one remote principal may have (docs/ARCHITECTURE.md, "Remote serving"). Default 100. */
  maxPrincipalChannels: number;
  /** Most messages one remote principal may append per minute, per server process. Default 600. */
  maxPrincipalAppendsPerMinute: number;
  /** Largest total size of one remote principal's queued messages and state documents. Default 256 MiB. */
  maxPrincipalBytes: number;
  /** Most calls of one remote principal that may wait at once in a server process (polls and watches with `wait_ms`). Default 100. */
  maxPrincipalWaitingCalls: number;
  /** Most calls that may wait at once in a server process, of every caller together. Default 1,000. */
  maxWaitingCalls: number;
  /**
   * Most calls of one remote principal that a server process answers at once over HTTP,
   * its waiting calls aside; a call counts from its arrival until its answer is sent, and
   * a JSON-RPC batch counts each call it holds. Default 16.
   */
  maxPrincipalActiveCalls: number;
  /** Most calls a server process answers at once over HTTP, of every caller together, waiting calls aside. Default 128. */
  maxActiveCalls: number;
  /**
   * Most remote principals whose data the store holds; a principal new to the store
   * cannot write while it holds this many (reading works). Default 10,000.
   */
  maxPrincipals: number;
}

/** The defaults (docs/ARCHITECTURE.md, "Channels"). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxMessageBytes: 64 * 1024,
  maxQueueMessages: 1000,
  maxQueueBytes: 8 * 1024 * 1024,
  maxBatchBytes: 1024 * 1024,
  maxStateBytes: 4 * 1024 * 1024,
  channelTtlMs: 7 * 24 * 60 * 60 * 1000,
  lockStaleMs: 5000,
  maxAgentWaitMs: 300_000,
  maxUiWaitMs: 30_000,
  maxPrincipalChannels: 100,
  maxPrincipalAppendsPerMinute: 600,
  maxPrincipalBytes: 256 * 1024 * 1024,
  maxPrincipalWaitingCalls: 100,
  maxWaitingCalls: 1000,
  maxPrincipalActiveCalls: 16,
  maxActiveCalls: 128,
  maxPrincipals: 10_000,
});

/** The environment variable that overrides each limit. */
export const LIMIT_ENV_VARS: Readonly<Record<keyof Limits, string>> = Object.freeze({
  maxMessageBytes: "BACKCHANNEL_MAX_MESSAGE_BYTES",
  maxQueueMessages: "BACKCHANNEL_MAX_QUEUE_MESSAGES",
  maxQueueBytes: "BACKCHANNEL_MAX_QUEUE_BYTES",
  maxBatchBytes: "BACKCHANNEL_MAX_BATCH_BYTES",
  maxStateBytes: "BACKCHANNEL_MAX_STATE_BYTES",
  channelTtlMs: "BACKCHANNEL_CHANNEL_TTL_MS",
  lockStaleMs: "BACKCHANNEL_LOCK_STALE_MS",
  maxAgentWaitMs: "BACKCHANNEL_MAX_AGENT_WAIT_MS",
  maxUiWaitMs: "BACKCHANNEL_MAX_UI_WAIT_MS",
  maxPrincipalChannels: "BACKCHANNEL_MAX_PRINCIPAL_CHANNELS",
  maxPrincipalAppendsPerMinute: "BACKCHANNEL_MAX_PRINCIPAL_APPENDS_PER_MINUTE",
  maxPrincipalBytes: "BACKCHANNEL_MAX_PRINCIPAL_BYTES",
  maxPrincipalWaitingCalls: "BACKCHANNEL_MAX_PRINCIPAL_WAITING_CALLS",
  maxWaitingCalls: "BACKCHANNEL_MAX_WAITING_CALLS",
  maxPrincipalActiveCalls: "BACKCHANNEL_MAX_PRINCIPAL_ACTIVE_CALLS",
  maxActiveCalls: "BACKCHANNEL_MAX_ACTIVE_CALLS",
  maxPrincipals: "BACKCHANNEL_MAX_PRINCIPALS",
});

/**
 * The limits set in `env`, each a positive integer.
 * @throws Error naming the variable when one is set to anything else.
 */
export function limitsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<Limits> {
  const limits: Partial<Limits> = {};
  for (const [key, name] of Object.entries(LIMIT_ENV_VARS) as [keyof Limits, string][]) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new Error(`${name}=${JSON.stringify(raw)} is not a positive whole number; unset it or fix it`);
    }
    limits[key] = value;
  }
  return limits;
}

/** How long a wall (an agent's status for every reader of its session) stays up when no duration is given: 1 hour. */
export const WALL_DEFAULT_SECONDS = 60 * 60;
/** The longest a wall may stay up: 3 days. */
export const WALL_MAX_SECONDS = 3 * 24 * 60 * 60;
/** The longest wall text, in characters (code points, as core/text.ts counts them): one line of a status bar. */
export const WALL_MAX_CHARS = 200;
/** The longest reader title, given or taken from the document's first heading, in characters. */
export const TITLE_MAX_CHARS = 200;
/** Most channels a session file remembers; the oldest are forgotten first. */
export const SESSION_MAX_CHANNELS = 32;

/** The largest HTML fragment `open_app` shows (markup, style and script of an agent-written app): 256 KiB of UTF-8. */
export const APP_HTML_MAX_BYTES = 256 * 1024;
/** The longest note kept with a saved app (what it does, which events it speaks), in characters. */
export const APP_DESCRIPTION_MAX_CHARS = 1000;
/**
 * The largest saved app on disk (`apps/<name>.json`): its fragment, title and note, as
 * JSON. Room for the largest fragment twice over, since JSON escapes every quote and newline.
 */
export const SAVED_APP_MAX_BYTES = 2 * APP_HTML_MAX_BYTES + 64 * 1024;
/**
 * Most saved apps one listing shows (`open_app {}` per page, `resources/list` in all),
 * by name: a listing reads each shown app's summary, so this bounds its work and its
 * answer (at most about 740 KiB of notes) however many apps are saved.
 */
export const SAVED_APP_LIST_PAGE = 100;

/*
 * How much of an outside text each one-line display shows, in characters; longer texts
 * are cut with "…" by `oneLine` (core/text.ts), which also makes them safe for a terminal.
 */

/** The wall in the status line, one segment among the host's own. */
export const STATUSLINE_WALL_CHARS = 60;
/** A message's preview in a line of the watcher (Claude Code's Monitor cuts lines at 500). */
export const WATCH_PREVIEW_CHARS = 160;
/** The one line the PostToolUse hook puts in Claude Code's tool panel. */
export const HOOK_SUMMARY_CHARS = 200;
/**
 * The session watcher's whole summary (what the wake hook hands the model); Claude Code
 * cuts hook strings at 10,000 characters, and what does not fit is left for a poll.
 */
export const WAKE_SUMMARY_CHARS = 8000;
/**
 * The `timeout` of the wake hook (plugin/hooks/hooks.json, `backchannel install hook`),
 * in seconds: 7 days. Claude Code kills an async hook after its `timeout` (600 s when
 * none is given); the hook's own timeout is a minute less, so it ends on its own first.
 */
export const WAKE_HOOK_TIMEOUT_S = 7 * 86_400;
/** One message's question or data in the session watcher's summary. */
export const WAKE_MESSAGE_CHARS = 1000;
/** A passage quoted by an ask, or a channel's title, in the session watcher's summary. */
export const WAKE_QUOTE_CHARS = 200;
/** A question quoted in `poll_agent_messages`'s description (Claude Code cuts descriptions at 2 KB). */
export const DESCRIPTION_QUOTE_CHARS = 60;
/** A question quoted in a Claude Code channel push. */
export const PUSH_QUESTION_CHARS = 300;
/** The highlighted passage quoted with it. */
export const PUSH_PASSAGE_CHARS = 120;

/**
 * The longest single wait of a call that crosses the network to a remote server
 * (`watch_agent_messages`, the remote watcher's each call): remote hosts and proxies
 * end a request near 60 s, so a longer wait is made of several of these.
 */
export const MAX_REMOTE_WAIT_MS = 25_000;
