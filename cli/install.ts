/**
 * `backchannel install statusline|hook` and `uninstall statusline|hook`: Claude Code's
 * settings (claude-code/install.ts, claude-code/install-hook.ts).
 */
import { callerErrorCode } from "../core/errors.js";
import { parseCommandLine } from "./args.js";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel install statusline|hook [--settings FILE]
       backchannel uninstall statusline|hook [--settings FILE]

install: makes "backchannel statusline" Claude Code's status line. The statusLine it
replaces is kept in backchannel-statusline.<settings file name> next to the settings
file, and keeps showing first; padding and refreshInterval (default 5 s) are kept.
Installing twice changes nothing.
uninstall: puts the kept statusLine back exactly (or removes the key if there was
none) and deletes the kept copy; refuses when the statusLine was changed since.
hook: the wake hook, "backchannel hook stop" as a Stop hook with "asyncRewake":
true, which wakes the agent when an app sends a message (the Claude Code plugin has
it too: use one or the other). uninstall takes it out, leaving other hooks alone.

Options:
  --settings FILE  the settings file (default $CLAUDE_CONFIG_DIR/settings.json, else
                   ~/.claude/settings.json; e.g. .claude/settings.json for a project).
                   Its folder must exist; install makes only the default's and a
                   missing .claude folder of an existing project
  -h, --help       show this help

Exit codes: 0 done (or nothing to do), 1 refused, a settings file that is not a
JSON object (left as it is) or a folder that does not exist (message on stderr).`;

/** Runs `install` or `uninstall` (`command`) with `args` (after it); resolves to the exit code. */
export async function run(command: "install" | "uninstall", args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(`backchannel ${command}`, args, {
    allowPositionals: true,
    options: {
      settings: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const target = positionals.length === 1 ? positionals[0] : undefined;
  if (target !== "statusline" && target !== "hook") {
    const what = positionals.length === 0 ? "nothing" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel ${command}: can only ${command} "statusline" or "hook", not ${what}\n\n${USAGE}\n`);
    return 1;
  }
  const [{ resolve }, { defaultSettingsPath }, statusline, hook] = await Promise.all([
    import("node:path"),
    import("../claude-code/settings-file.js"),
    import("../claude-code/install.js"),
    import("../claude-code/install-hook.js"),
  ]);
  const settingsPath = resolve(values.settings ?? defaultSettingsPath());
  const action =
    target === "hook"
      ? command === "install"
        ? hook.installWakeHook
        : hook.uninstallWakeHook
      : command === "install"
        ? statusline.installStatusline
        : statusline.uninstallStatusline;
  let outcome: { ok: boolean; message: string };
  try {
    outcome = await action(settingsPath);
  } catch (error) {
    // A settings file or folder install cannot change: said in the command's words, like a refusal.
    if (callerErrorCode(error) !== "SETTINGS_FILE") throw error;
    outcome = { ok: false, message: (error as Error).message };
  }
  if (outcome.ok) process.stdout.write(`${outcome.message}\n`);
  else process.stderr.write(`backchannel ${command} ${target}: ${outcome.message}\n`);
  return outcome.ok ? 0 : 1;
}
