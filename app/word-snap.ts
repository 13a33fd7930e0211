/**
 * Snapping the page's selection to whole words when a pointer made it (the rule, and
 * why: ./words.ts).
 */
import { blockOf, offsetIn, rangeOf } from "./document.js";
import { snapToWords, wordEnd, wordStart } from "./words.js";

/**
 * Snaps the page's selection to whole words ({@link snapToWords}) when it starts in a
 * block of `doc`, keeping its direction (the end a Shift+click moves stays the one the
 * drag ended at). A selection across blocks grows at its start in its first block and at
 * its end in its last. Changes nothing when the selection is already snapped.
 */
export function snapSelectionToWords(doc: HTMLElement): void {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
  const range = selection.getRangeAt(0);
  const startBlock = doc.contains(range.startContainer) ? blockOf(range.startContainer) : null;
  const endBlock = doc.contains(range.endContainer) ? blockOf(range.endContainer) : null;
  if (!startBlock || !endBlock) return;
  const startText = startBlock.textContent ?? "";
  const start = offsetIn(startBlock, range.startContainer, range.startOffset);
  const end = offsetIn(endBlock, range.endContainer, range.endOffset);
  const snapped =
    startBlock === endBlock
      ? snapToWords(startText, start, end)
      : { start: wordStart(startText, start), end: wordEnd(endBlock.textContent ?? "", end) };
  if (snapped.start === start && snapped.end === end) return;
  const from = rangeOf(startBlock, snapped.start, snapped.start);
  const to = rangeOf(endBlock, snapped.end, snapped.end);
  const backwards = selection.anchorNode === range.endContainer && selection.anchorOffset === range.endOffset && !range.collapsed;
  if (backwards) selection.setBaseAndExtent(to.endContainer, to.endOffset, from.startContainer, from.startOffset);
  else selection.setBaseAndExtent(from.startContainer, from.startOffset, to.endContainer, to.endOffset);
}
