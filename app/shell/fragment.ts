/**
 * Runs an agent-written fragment: its markup goes into the page as it is, and its
 * scripts run one after the other, in document order, as the page's own scripts would.
 *
 * Markup parsed through a `<template>` never runs its scripts, so each one is replaced
 * by a fresh copy, which does: inline scripts at once, each named
 * `app-script-<n>.js` (a `sourceURL` comment) so that an error can be traced back to
 * its line of the fragment; a script with `src` is waited for (and fails, unless the
 * host's CSP allows its origin). The shell itself never evaluates a string as code,
 * and the hosts' CSP (no 'unsafe-eval') forbids the fragment to.
 */

/** One script of the fragment: where its text starts in the fragment (1-based line), when known. */
export interface FragmentScript {
  /** 1-based, in document order. */
  index: number;
  /** The fragment line of the script's first line of text, or null when it could not be located. */
  firstLine: number | null;
  /** The script's `src`, for an external script. */
  src?: string;
}

/** What {@link runFragment} tells its caller while it runs. */
export interface FragmentHooks {
  /** Called just before script `script` runs (and again with null after it ran). */
  running(script: FragmentScript | null): void;
  /** An external script failed to load. */
  failed(script: FragmentScript): void;
}

/** The sourceURL of script `index`, and the pattern that finds it in a stack or an error's file name. */
export function scriptUrl(index: number): string {
  return `app-script-${index}.js`;
}

/** Matches `app-script-<n>.js:<line>` in a stack trace; group 1 is n, group 2 the line. */
export const SCRIPT_LOCATION = /app-script-(\d+)\.js:(\d+)/;

/**
 * Puts `html` into `container` and runs its scripts in order.
 * @returns the scripts, so that errors reported later can be placed.
 */
export async function runFragment(container: HTMLElement, html: string, hooks: FragmentHooks): Promise<FragmentScript[]> {
  // The HTML parser turns CR LF into LF; so must the text that lines are counted in.
  const source = html.replace(/\r\n?/g, "\n");
  const template = document.createElement("template");
  template.innerHTML = source;
  container.replaceChildren(template.content);
  const scripts: FragmentScript[] = [];
  let cursor = 0;
  for (const [position, inert] of [...container.querySelectorAll("script")].entries()) {
    const script: FragmentScript = { index: position + 1, firstLine: null };
    const fresh = document.createElement("script");
    for (const attribute of inert.attributes) fresh.setAttribute(attribute.name, attribute.value);
    const text = inert.text;
    // A script's text is raw (no entities), so it appears verbatim in the source.
    const at = text.trim() === "" ? -1 : source.indexOf(text, cursor);
    if (at >= 0) {
      script.firstLine = lineAt(source, at);
      cursor = at + text.length;
    }
    let loaded: Promise<void> = Promise.resolve();
    if (inert.hasAttribute("src")) {
      script.src = inert.getAttribute("src") ?? "";
      loaded = new Promise((resolve) => {
        fresh.addEventListener("load", () => resolve(), { once: true });
        fresh.addEventListener(
          "error",
          () => {
            hooks.failed(script);
            resolve();
          },
          { once: true },
        );
      });
    } else {
      fresh.text = `${text}\n//# sourceURL=${scriptUrl(script.index)}`;
    }
    scripts.push(script);
    hooks.running(script);
    try {
      inert.replaceWith(fresh);
    } finally {
      hooks.running(null);
    }
    await loaded;
  }
  return scripts;
}

/** The 1-based line of `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line += 1;
  return line;
}
