/**
 * `backchannel install statusline|hook` and `uninstall statusline|hook`: Claude Code's
 * settings (claude-code/install.ts, claude-code/install-hook.ts); `install codex` and
 * `uninstall codex`: Codex CLI's (codex/install.ts).
 */
import { callerErrorCode } from "../core/errors.js";
import { parseCommandLine } from "./args.js";

/** The usage text of this command. */
export const USAGE = `Usage: backchannel install statusline|hook [--settings FILE]
       backchannel uninstall statusline|hook [--settings FILE]
       backchannel install codex [--codex-home DIR] [--codex COMMAND]
       backchannel uninstall codex [--codex-home DIR] [--codex COMMAND]

install: makes "backchannel statusline" Claude Code's status line. The statusLine it
replaces is kept in backchannel-statusline.<settings file name> next to the settings
file, and keeps showing first; padding and refreshInterval (default 5 s) are kept.
Installing twice changes nothing.
uninstall: puts the kept statusLine back exactly (or removes the key if there was
none) and deletes the kept copy; refuses when the statusLine was changed since.
hook: the wake hook, "backchannel hook stop" as a Stop hook with "asyncRewake":
true, which wakes the agent when an app sends a message (the Claude Code plugin has
it too: use one or the other). uninstall takes it out, leaving other hooks alone.

codex: Codex CLI, in one step: the MCP server "backchannel" (unless you have one by
that name), and the wake hook, "backchannel hook codex-stop" as a Stop hook in
hooks.json, trusted. After each turn it starts a waker that gives the agent a turn
when an app sends a message (codex queue --resume): nothing to arm. Codex itself
edits config.toml (it runs "codex app-server"), so your comments stay. uninstall
takes out what install added; a server entry you changed is left alone.

Options:
  --settings FILE    the settings file (default $CLAUDE_CONFIG_DIR/settings.json, else
                     ~/.claude/settings.json; e.g. .claude/settings.json for a project).
                     Its folder must exist; install makes only the default's and a
                     missing .claude folder of an existing project
  --codex-home DIR   codex: Codex's folder (default $CODEX_HOME, else ~/.codex)
  --codex COMMAND    codex: the command that runs Codex (default codex)
  -h, --help         show this help

Exit codes: 0 done (or nothing to do), 1 refused, Codex could not be run, a settings
file that is not a JSON object (left as it is) or a folder that does not exist
(message on stderr).`;

/** What install and uninstall take care of. */
const TARGETS = ["statusline", "hook", "codex"] as const;

/** What an install or uninstall step came to: done (`ok`) or refused, and what to say. */
type InstallOutcome = { ok: boolean; message: string };

/** Runs `install` or `uninstall` (`command`) with `args` (after it); resolves to the exit code. */
export async function run(command: "install" | "uninstall", args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(`backchannel ${command}`, args, {
    allowPositionals: true,
    options: {
      settings: { type: "string" },
      "codex-home": { type: "string" },
      codex: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const target = positionals.length === 1 ? TARGETS.find((name) => name === positionals[0]) : undefined;
  if (target === undefined) {
    const what = positionals.length === 0 ? "nothing" : JSON.stringify(positionals.join(" "));
    process.stderr.write(`backchannel ${command}: can only ${command} "statusline", "hook" or "codex", not ${what}\n\n${USAGE}\n`);
    return 1;
  }
  const codexOptions = values["codex-home"] !== undefined || values.codex !== undefined;
  if (target === "codex" ? values.settings !== undefined : codexOptions) {
    const [given, owner] = target === "codex" ? ["--settings", '"statusline" and "hook"'] : ["--codex-home and --codex", '"codex"'];
    process.stderr.write(`backchannel ${command} ${target}: ${given} belong to ${owner}\n\n${USAGE}\n`);
    return 1;
  }
  let outcome: InstallOutcome;
  try {
    outcome = await (target === "codex" ? codexStep(command, values) : claudeCodeStep(command, target, values.settings));
  } catch (error) {
    // A settings file or folder install cannot change: said in the command's words, like a refusal.
    if (callerErrorCode(error) !== "SETTINGS_FILE") throw error;
    outcome = { ok: false, message: (error as Error).message };
  }
  if (outcome.ok) process.stdout.write(`${outcome.message}\n`);
  else process.stderr.write(`backchannel ${command} ${target}: ${outcome.message}\n`);
  return outcome.ok ? 0 : 1;
}

/** Installs or uninstalls backchannel in Codex CLI (codex/install.ts). */
async function codexStep(command: "install" | "uninstall", values: { "codex-home"?: string; codex?: string }): Promise<InstallOutcome> {
  const [{ resolve }, codex, { shellWords }] = await Promise.all([import("node:path"), import("../codex/install.js"), import("../core/commands.js")]);
  const options = { codexHome: resolve(values["codex-home"] ?? codex.defaultCodexHome()), codex: shellWords(values.codex ?? "codex") };
  return command === "install" ? codex.installCodex(options) : codex.uninstallCodex(options);
}

/** Installs or uninstalls Claude Code's status line or wake hook in the settings file at `settings` (default Claude Code's user settings). */
async function claudeCodeStep(
  command: "install" | "uninstall",
  target: "statusline" | "hook",
  settings: string | undefined,
): Promise<InstallOutcome> {
  const [{ resolve }, { defaultSettingsPath }, statusline, hook] = await Promise.all([
    import("node:path"),
    import("../claude-code/settings-file.js"),
    import("../claude-code/install.js"),
    import("../claude-code/install-hook.js"),
  ]);
  const settingsPath = resolve(settings ?? defaultSettingsPath());
  if (target === "hook") return command === "install" ? hook.installWakeHook(settingsPath) : hook.uninstallWakeHook(settingsPath);
  return command === "install" ? statusline.installStatusline(settingsPath) : statusline.uninstallStatusline(settingsPath);
}
