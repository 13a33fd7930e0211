/**
 * "Open a document…": a file (markdown, or plain text for `.txt`) or pasted text, opened
 * with `open_reader` on a new channel. The reader shown before keeps its channel.
 */

/** Wires the panel; `open` gets `open_reader`'s arguments, `onerror` what went wrong. */
export function setUpOpenPanel(open: (args: Record<string, unknown>) => Promise<void>, onerror: (error: Error) => void): void {
  const toggle = document.getElementById("open-toggle")!;
  const panel = document.getElementById("open-panel")!;
  const show = (shown: boolean) => {
    panel.hidden = !shown;
    toggle.setAttribute("aria-expanded", String(shown));
  };
  toggle.addEventListener("click", () => show(panel.hidden));
  document.getElementById("open-submit")!.addEventListener("click", async () => {
    const file = (document.getElementById("open-file") as HTMLInputElement).files?.[0];
    const pasted = (document.getElementById("open-text") as HTMLTextAreaElement).value;
    const text = file ? await file.text() : pasted;
    if (text.trim() === "") return onerror(new Error("Choose a file or paste some text to open."));
    const title = file ? file.name.replace(/\.(md|markdown|txt)$/i, "") : undefined;
    const markdown = !file || !/\.txt$/i.test(file.name);
    document.getElementById("error")!.hidden = true;
    try {
      await open({ ...(title ? { title } : {}), ...(markdown ? { markdown: text } : { text }) });
      show(false);
    } catch (error) {
      onerror(error as Error);
    }
  });
}
