/**
 * The floating "Ask" button: beside a selection in the document, or beside the block
 * that has the keyboard focus. On a wide reader it sits in the margin, level with the
 * passage, so it never covers the words after it; on a narrow one it docks at the
 * bottom of the reader.
 */

/** Where the button is shown. */
export class AskButton {
  constructor(
    private readonly button: HTMLButtonElement,
    private readonly layout: HTMLElement,
    private readonly doc: HTMLElement,
  ) {
    // Keep the selection when the button is pressed.
    button.addEventListener("mousedown", (event) => event.preventDefault());
  }

  /** True while the button shows. */
  get shown(): boolean {
    return !this.button.hidden;
  }

  /** Shows the button for `rect` (the passage's last line, or the focused block) with `label`. */
  show(rect: DOMRect, label: string): void {
    this.button.textContent = label;
    const narrow = this.layout.classList.contains("narrow");
    this.button.classList.toggle("docked", narrow);
    if (!narrow) {
      const origin = this.layout.getBoundingClientRect();
      const docRight = this.doc.getBoundingClientRect().right;
      this.button.style.left = `${docRight - origin.left + 8}px`;
      this.button.style.top = `${rect.top - origin.top}px`;
    } else {
      this.button.style.left = "";
      this.button.style.top = "";
    }
    this.button.hidden = false;
  }

  /** Hides the button. */
  hide(): void {
    this.button.hidden = true;
  }
}
