/**
 * Tells the agent when its app fails, so that it can fix the app: every uncaught error
 * and unhandled rejection once the fragment runs, every error thrown by one of its
 * channel handlers, and every external script that did not load, goes to the agent
 * as `app_error {message, line}` (`line`: the line of the fragment, or null when it
 * cannot be placed) and is shown to the user.
 *
 * A broken app can fail in a loop (an animation frame, a timer): the same error is
 * sent once, and at most {@link MAX_REPORTS} errors per load.
 */
import type { AppErrorData } from "../../protocol/app-shell.js";
import { SCRIPT_LOCATION, type FragmentScript } from "./fragment.js";

/** Most errors sent to the agent per load of the app. */
export const MAX_REPORTS = 10;

/** Longest message sent, in characters (a message is data, and the agent reads it). */
const MAX_MESSAGE_CHARS = 500;

/** Collects the fragment's errors and sends each once. */
export class ErrorReporter {
  private readonly seen = new Set<string>();
  private scripts: FragmentScript[] = [];
  private current: FragmentScript | null = null;

  /**
   * @param send sends `app_error` to the agent (it must not throw).
   * @param show shows the error to the user.
   */
  constructor(
    private readonly send: (data: AppErrorData) => void,
    private readonly show: (data: AppErrorData) => void,
  ) {}

  /** The script that runs now (its errors belong to it even when the browser cannot name it), or null. */
  running(script: FragmentScript | null): void {
    if (script && !this.scripts.includes(script)) this.scripts.push(script);
    this.current = script;
  }

  /** Reports an external script that did not load. */
  failed(script: FragmentScript): void {
    this.report({
      message: `the script ${script.src} did not load: the host allows no network (CSP); put its code inline in a <script>`,
      line: null,
    });
  }

  /** Listens for uncaught errors and unhandled rejections of the page from now on. */
  listen(target: Window): void {
    target.addEventListener("error", (event) => this.report(this.fromEvent(event)));
    target.addEventListener("unhandledrejection", (event) => this.report(this.fromError(event.reason)));
  }

  /** Reports `error`, thrown by the app's code (e.g. one of its channel handlers). */
  reportError(error: unknown): void {
    this.report(this.fromError(error));
  }

  private fromEvent(event: ErrorEvent): AppErrorData {
    const error: unknown = event.error;
    const message = error instanceof Error ? describe(error) : event.message.replace(/^Uncaught /, "") || "script error";
    const line =
      (error instanceof Error ? this.lineOf(error.stack ?? "") : null) ??
      this.lineOf(`${event.filename}:${event.lineno}`) ??
      // A script that names no source: the error belongs to the script running now, if any.
      (this.current?.firstLine != null && event.lineno > 0 ? this.current.firstLine + event.lineno - 1 : null);
    return { message, line };
  }

  private fromError(error: unknown): AppErrorData {
    if (error instanceof Error) return { message: describe(error), line: this.lineOf(error.stack ?? "") };
    return { message: `uncaught ${typeof error}: ${String(error)}`, line: null };
  }

  /** The fragment line of the first `app-script-<n>.js:<line>` in `text`, or null. */
  private lineOf(text: string): number | null {
    const match = SCRIPT_LOCATION.exec(text);
    if (!match) return null;
    const script = this.scripts.find((candidate) => candidate.index === Number(match[1]));
    return script?.firstLine != null ? script.firstLine + Number(match[2]) - 1 : null;
  }

  private report(data: AppErrorData): void {
    const clipped = { message: data.message.slice(0, MAX_MESSAGE_CHARS), line: data.line };
    const key = `${clipped.line}:${clipped.message}`;
    if (this.seen.has(key) || this.seen.size >= MAX_REPORTS) return;
    this.seen.add(key);
    this.show(clipped);
    this.send(clipped);
  }
}

/**
 * `error` as the app's author would write it: `SyntaxError: Unexpected token ';'`. Chromium
 * puts the DOM call that ran the script before a syntax error's own words ("Failed to
 * execute 'replaceWith' on 'Element': …"): that call is the shell's, not the app's.
 */
function describe(error: Error): string {
  return `${error.name}: ${error.message.replace(/^Failed to execute '[^']*' on '[^']*': /, "")}`;
}
