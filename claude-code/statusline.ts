/**
 * `backchannel statusline`: Claude Code's status line command. It prints what waits on
 * this session's channels (./waiting.ts), after the output of the status line it
 * replaced when there is one (./stash.ts, ./wrap.ts), and nothing at all when there is
 * nothing to show (nor when stdin holds more than 8 MiB). It always exits 0: a status
 * line that fails shows the user an error where their status line was.
 *
 * It runs every few seconds, so it reads through the store's read-only view (no lock
 * library, never the MCP SDK).
 */
import { sessionKey } from "../core/session-key.js";
import { oneLine } from "../core/text.js";
import type { ChannelReader } from "../store/store.js";
import { stashedCommand } from "./stash.js";
import { readStdin } from "./stdin.js";
import { waitingLine } from "./waiting.js";
import { runWrapped } from "./wrap.js";

/** Options of {@link runStatusline}. */
export interface StatuslineOptions {
  /** The store, read-only (the server's); none when the store setting is unusable (then only the wrapped line shows). */
  reader: ChannelReader | undefined;
  /** The stash file of the status line this one replaced; none: nothing is wrapped. */
  stashPath?: string;
}

/**
 * Prints the status line on stdout: the wrapped command's output (cut off after 2 s,
 * see ./wrap.ts) with ` | ` and our segment appended to its last line, or
 * either alone, or nothing.
 * @returns 0, always (the wrapped command's failure is not ours).
 */
export async function runStatusline(options: StatuslineOptions): Promise<number> {
  // Read all of stdin even when nothing is wrapped: the host writes its JSON and must not meet a closed pipe.
  const input = await readStdin();
  if (input === undefined) return 0;
  const command = options.stashPath === undefined ? undefined : stashedCommand(options.stashPath);
  const theirs = command === undefined ? Promise.resolve("") : runWrapped(command, input);
  // Ours is built from the data directory's files: nothing in them may reach the terminal as an escape.
  // Theirs is the user's own command, whose colours are theirs to print.
  const ours = options.reader ? oneLine(await waitingLine(options.reader, sessionKey())) : "";
  const wrapped = (await theirs).trimEnd();
  const line = wrapped !== "" && ours !== "" ? `${wrapped} | ${ours}` : wrapped || ours;
  if (line !== "") process.stdout.write(`${line}\n`);
  return 0;
}
