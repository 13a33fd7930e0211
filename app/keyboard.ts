/**
 * The keyboard route through the document, for people who do not use a mouse (and
 * browsers without caret browsing). The document is one tab stop: the current block
 * (paragraph, list item, heading, cell, code block) has `tabindex="0"`, and the arrows
 * move it (a roving tab stop, so a long document does not add thousands of tab stops):
 *
 * - ↑ ↓ (or k j): previous / next block; Home / End: first / last block;
 * - ← →: select the previous / next sentence of the block;
 * - Enter (or a): ask about the selected sentence, else the whole block;
 * - Escape: drop the sentence selection.
 *
 * A highlighted passage is a tab stop of its own: Enter or Space opens its thread.
 * The keys are listed in reader.html, where a person sees them.
 */
import { blockOf, rangeOf, sentencesOf } from "./document.js";

/** What the keyboard asks of the reader. */
export interface KeyboardCallbacks {
  /** Ask about `block`: `range` is the selected part of it, or null for the whole block. */
  ask(block: HTMLElement, range: Range | null): void;
  /** Open the thread whose passage is `mark`. */
  openThread(threadId: string): void;
  /** A block got the keyboard focus (show what Enter does), or lost it (`null`). */
  onfocusblock(block: HTMLElement | null, sentence: boolean): void;
}

/** The roving tab stop over the blocks of one rendered document. */
export class BlockKeys {
  private blocks: HTMLElement[] = [];
  private current: HTMLElement | undefined;
  private sentence = -1;

  constructor(
    doc: HTMLElement,
    private readonly callbacks: KeyboardCallbacks,
  ) {
    doc.addEventListener("keydown", (event) => this.onkeydown(event));
    doc.addEventListener("focusin", (event) => {
      const block = event.target instanceof HTMLElement && event.target.dataset.block !== undefined ? event.target : null;
      if (block) {
        this.makeCurrent(block);
        this.callbacks.onfocusblock(block, this.sentence >= 0);
      }
    });
    doc.addEventListener("focusout", (event) => {
      if (!(event.relatedTarget instanceof Node && doc.contains(event.relatedTarget))) this.callbacks.onfocusblock(null, false);
    });
    // A click makes its block the current one, so that Tab comes back to where the person reads.
    doc.addEventListener("mousedown", (event) => {
      const block = blockOf(event.target as Node);
      if (block) this.makeCurrent(block);
    });
  }

  /** Starts over on a newly rendered document; the first block becomes the tab stop. */
  reset(blocks: HTMLElement[]): void {
    this.blocks = blocks;
    this.current = undefined;
    this.sentence = -1;
    if (blocks[0]) this.makeCurrent(blocks[0]);
  }

  /** Moves the keyboard focus to the current block (the "skip to the document" link uses it). */
  focusCurrent(): void {
    this.current?.focus({ preventScroll: false });
  }

  private makeCurrent(block: HTMLElement): void {
    if (block === this.current) return;
    // Code blocks keep their own tab stop: they scroll sideways.
    if (this.current && this.current.tagName !== "PRE") this.current.removeAttribute("tabindex");
    this.current = block;
    this.sentence = -1;
    block.tabIndex = 0;
  }

  private move(index: number): void {
    const block = this.blocks[Math.max(0, Math.min(this.blocks.length - 1, index))];
    if (!block) return;
    this.makeCurrent(block);
    document.getSelection()?.removeAllRanges();
    block.focus();
    block.scrollIntoView({ block: "nearest" });
  }

  private selectSentence(block: HTMLElement, step: 1 | -1): void {
    const sentences = sentencesOf(block.textContent ?? "");
    if (sentences.length === 0) return;
    this.sentence = Math.max(0, Math.min(sentences.length - 1, this.sentence < 0 ? (step > 0 ? 0 : sentences.length - 1) : this.sentence + step));
    const [start, end] = sentences[this.sentence]!;
    const selection = document.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(rangeOf(block, start, end));
    this.callbacks.onfocusblock(block, true);
  }

  private onkeydown(event: KeyboardEvent): void {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    const mark = target.closest<HTMLElement>("mark.passage");
    if (mark?.dataset.thread && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      this.callbacks.openThread(mark.dataset.thread);
      return;
    }
    const block = blockOf(target);
    // Keys on a link or another control inside a block are theirs.
    if (!block || (target !== block && !mark)) return;
    const index = Number(block.dataset.block);
    const selection = document.getSelection();
    const selected = selection && !selection.isCollapsed && block.contains(selection.anchorNode) ? selection.getRangeAt(0) : null;
    switch (event.key) {
      case "ArrowDown":
      case "j":
        this.move(index + 1);
        break;
      case "ArrowUp":
      case "k":
        this.move(index - 1);
        break;
      case "Home":
        this.move(0);
        break;
      case "End":
        this.move(this.blocks.length - 1);
        break;
      case "ArrowRight":
        this.makeCurrent(block);
        this.selectSentence(block, 1);
        break;
      case "ArrowLeft":
        this.makeCurrent(block);
        this.selectSentence(block, -1);
        break;
      case "Enter":
      case "a":
        this.callbacks.ask(block, selected);
        break;
      case "Escape":
        this.sentence = -1;
        selection?.removeAllRanges();
        this.callbacks.onfocusblock(block, false);
        break;
      default:
        return;
    }
    event.preventDefault();
  }
}
