/**
 * Desktop notifications for `backchannel watch --notify`: so that the person, not only
 * the agent, hears that the app sent something. Each OS has its own command; where
 * none works (no command, no desktop session), the watcher says so once on stderr and
 * goes on without.
 */
import { spawn } from "node:child_process";

/** Shows desktop notifications; see {@link desktopNotifier}. */
export interface DesktopNotifier {
  /** Shows one notification. Resolves once the command has started (or failed to), never rejects. */
  notify(title: string, body: string): Promise<void>;
}

/** The command that shows a notification on `platform`, as [program, ...args]. */
export function notificationCommand(platform: NodeJS.Platform, title: string, body: string): string[] {
  if (platform === "darwin") {
    const quote = (text: string) => `"${text.replace(/["\\]/g, "\\$&")}"`;
    return ["osascript", "-e", `display notification ${quote(body)} with title ${quote(title)}`];
  }
  if (platform === "win32") {
    // A toast through PowerShell's own registered app id (docs/ARCHITECTURE.md, "Hosts"); the texts
    // travel as environment variables, so nothing in them is parsed as script.
    const script = [
      "$t=[Windows.UI.Notifications.ToastNotificationManager,Windows.UI.Notifications,ContentType=WindowsRuntime]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)",
      "$x=$t.GetElementsByTagName('text')",
      "[void]$x.Item(0).AppendChild($t.CreateTextNode($env:BACKCHANNEL_TITLE))",
      "[void]$x.Item(1).AppendChild($t.CreateTextNode($env:BACKCHANNEL_BODY))",
      "$id='{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe'",
      "[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier($id).Show([Windows.UI.Notifications.ToastNotification]::new($t))",
    ].join(";");
    return ["powershell", "-NoProfile", "-NonInteractive", "-Command", script];
  }
  return ["notify-send", "--app-name=backchannel", title, body];
}

/**
 * A notifier for this OS. The first failure (command missing, or exiting non-zero) is
 * reported through `err` once, with what to install; later ones are silent.
 */
export function desktopNotifier(err: (line: string) => void, platform: NodeJS.Platform = process.platform): DesktopNotifier {
  let warned = false;
  const warn = (reason: string) => {
    if (warned) return;
    warned = true;
    const hint = platform === "linux" ? " (on Debian and Ubuntu: apt-get install libnotify-bin, in a desktop session)" : "";
    err(`no desktop notification: ${reason}${hint}; watching goes on without`);
  };
  return {
    notify(title, body) {
      const [program, ...args] = notificationCommand(platform, title, body);
      return new Promise<void>((resolve) => {
        const child = spawn(program!, args, {
          stdio: "ignore",
          env: { ...process.env, BACKCHANNEL_TITLE: title, BACKCHANNEL_BODY: body },
        });
        child.once("error", (error: NodeJS.ErrnoException) => {
          warn(error.code === "ENOENT" ? `${program} not found` : `${program} failed (${error.message})`);
          resolve();
        });
        child.once("spawn", () => {
          child.once("exit", (code) => {
            if (code !== 0) warn(`${program} exited ${code}`);
          });
          child.unref();
          resolve();
        });
      });
    },
  };
}
