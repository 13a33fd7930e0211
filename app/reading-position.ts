/**
 * The reading position: which block of the document is at the top of the reader. It is
 * kept in the channel (`reader_position`, protocol/reader.ts `ReaderPosition`) once
 * scrolling pauses and when the reader goes away, and a re-rendered reader scrolls back
 * to it: in every host, since it needs nothing of the host but the reader's own tools.
 */
import type { ReaderPosition } from "../protocol/reader.js";

/** How long after the last scroll the position is kept: scrolling does not cost a call a frame. */
const SAVE_DELAY_MS = 600;

/** The reading position over one rendered document at a time. */
export class ReadingPosition {
  private blocks: HTMLElement[] = [];
  /** The block last kept (or restored); undefined while no document is shown. */
  private kept: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly scroller: HTMLElement,
    private readonly keep: (block: number) => Promise<void>,
  ) {
    scroller.addEventListener("scroll", () => this.scrolled(), { passive: true });
    // Best effort: the host may be gone too.
    addEventListener("pagehide", () => this.flush());
  }

  /** Starts on the whole rendered document `blocks`, scrolled to `position`'s block (left at the top when null or past the end). */
  reset(blocks: HTMLElement[], position: ReaderPosition | null): void {
    this.blocks = blocks;
    const block = position ? blocks[position.block] : undefined;
    this.kept = block ? position!.block : 0;
    if (block) this.scroller.scrollTop += block.getBoundingClientRect().top - this.scroller.getBoundingClientRect().top;
  }

  /** Stops keeping the position (another document is being shown). */
  stop(): void {
    clearTimeout(this.timer);
    this.kept = undefined;
  }

  private scrolled(): void {
    if (this.kept === undefined) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), SAVE_DELAY_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    if (this.kept === undefined) return;
    const block = this.topBlock();
    if (block === this.kept) return;
    this.kept = block;
    this.keep(block).catch((error) => console.warn("backchannel reader: the reading position was not kept:", error));
  }

  /** The first block whose bottom is below the reader's top (blocks are in page order: a binary search, for long documents). */
  private topBlock(): number {
    const top = this.scroller.getBoundingClientRect().top;
    let low = 0;
    let high = this.blocks.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.blocks[middle]!.getBoundingClientRect().bottom <= top) low = middle + 1;
      else high = middle;
    }
    return Math.max(0, low);
  }
}
