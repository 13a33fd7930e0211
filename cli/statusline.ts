/**
 * `backchannel statusline`: Claude Code's status line command (claude-code/statusline.ts).
 */
import { parseCommandLine } from "./args.js";
import { openReader, type StoreLocation, storeLocationFromEnv } from "../store/open.js";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel statusline [--stash FILE]

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

/** Runs the command with `args` (after its name); resolves to the exit code. */
export async function run(args: string[]): Promise<number> {
  const { values } = parseCommandLine("backchannel statusline", args, {
    options: {
      stash: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { runStatusline } = await import("../claude-code/statusline.js");
  // A store setting that is not usable shows nothing of ours: a status line never fails.
  let location: StoreLocation | undefined;
  try {
    location = storeLocationFromEnv();
  } catch {
    return runStatusline({ reader: undefined, stashPath: values.stash });
  }
  const opened = await openReader(location);
  try {
    return await runStatusline({ reader: opened.reader, stashPath: values.stash });
  } finally {
    await opened.close();
  }
}
