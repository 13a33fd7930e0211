/**
 * Placing the thread cards: in the margin level with their passage (runs of cards that
 * would overlap spread around their passages, see {@link stack}), or, on a narrow reader, right after the top-level element that
 * holds the passage. Cards are kept in page order in the DOM too, so that Tab visits
 * them in the order a person reads them. Only positions change here, never widths, so
 * placing cannot start a resize loop.
 */
import { topLevelOf } from "./document.js";
import type { ThreadCard } from "./threads.js";

/** Below this width of the reader, cards go under their paragraph instead of into the margin. */
export const NARROW_WIDTH = 720;
/** Space between two cards in the margin. */
const GAP = 12;

/** The elements the layout works on. */
export interface LayoutElements {
  layout: HTMLElement;
  doc: HTMLElement;
  margin: HTMLElement;
}

/** A card of the margin, in page order: the top it wants (its passage's) and its height. */
type Placed = { element: HTMLElement; wanted: number; height: number };

/**
 * The tops of `cards` (in page order) that keep them from overlapping, {@link GAP} apart
 * and never above the margin's top, while each stays as near its passage as the others
 * allow: cards that would overlap form a run, placed together where the sum of the
 * squared distances to their passages is least (the mean of the tops they want, less
 * their offsets in the run), so that a run spreads above and below its passages instead
 * of only drifting down. A run that then reaches the one before merges with it.
 */
function stack(cards: Placed[]): (Placed & { top: number })[] {
  type Run = { first: number; count: number; height: number; sum: number; top: number };
  const runs: Run[] = [];
  cards.forEach((card, index) => {
    let run: Run = { first: index, count: 1, height: card.height, sum: card.wanted, top: Math.max(0, card.wanted) };
    for (let before = runs.at(-1); before && before.top + before.height + GAP > run.top; before = runs.at(-1)) {
      runs.pop();
      // Each card's offset in the merged run: the height of the cards above it in the run.
      let offset = before.height + GAP;
      let sum = before.sum;
      for (let i = run.first; i < run.first + run.count; i++) {
        sum += cards[i]!.wanted - offset;
        offset += cards[i]!.height + GAP;
      }
      const count = before.count + run.count;
      run = { first: before.first, count, height: offset - GAP, sum, top: Math.max(0, sum / count) };
    }
    runs.push(run);
  });
  const tops: (Placed & { top: number })[] = [];
  for (const run of runs) {
    let top = run.top;
    for (const card of cards.slice(run.first, run.first + run.count)) {
      tops.push({ ...card, top });
      top += card.height + GAP;
    }
  }
  return tops;
}

/** The first mark of each thread in `doc`, by thread id. */
function marksOf(doc: HTMLElement): Map<string, HTMLElement> {
  const marks = new Map<string, HTMLElement>();
  for (const mark of doc.querySelectorAll<HTMLElement>("mark.passage[data-thread]")) {
    if (!marks.has(mark.dataset.thread!)) marks.set(mark.dataset.thread!, mark);
  }
  return marks;
}

/** Places every card of `cards` (closed ones are hidden and skipped). */
export function placeCards(elements: LayoutElements, cards: Iterable<ThreadCard>): void {
  const { layout, doc, margin } = elements;
  const narrow = layout.clientWidth < NARROW_WIDTH;
  layout.classList.toggle("narrow", narrow);
  const marks = marksOf(doc);
  const placed = [...cards]
    .map((card) => ({ card, mark: marks.get(card.thread.thread_id) }))
    .sort((a, b) => {
      if (!a.mark || !b.mark) return a.mark ? -1 : b.mark ? 1 : 0;
      return a.mark.compareDocumentPosition(b.mark) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
    });
  const focused = document.activeElement;
  const column: Placed[] = [];
  const marginTop = narrow ? 0 : margin.getBoundingClientRect().top;
  const lastAfter = new Map<Element, Element>();
  let previous: Element | null = null;
  for (const { card, mark } of placed) {
    const element = card.element;
    if (narrow) {
      element.style.top = "";
      const holder = mark ? topLevelOf(doc, mark) : doc.lastElementChild;
      const after = holder ? (lastAfter.get(holder) ?? holder) : null;
      if (after && after.nextElementSibling !== element) after.after(element);
      else if (!after) doc.append(element);
      if (holder) lastAfter.set(holder, element);
      continue;
    }
    // In page order: move the element only when it is out of place (a move drops the focus inside it).
    const wantedPrevious = previous;
    if (element.parentElement !== margin || element.previousElementSibling !== wantedPrevious) {
      if (wantedPrevious) wantedPrevious.after(element);
      else margin.prepend(element);
    }
    previous = element;
    if (element.hidden) continue;
    // A card without a passage (its thread's passage is gone) goes after the one before it.
    const wanted = mark ? mark.getBoundingClientRect().top - marginTop : (column.at(-1)?.wanted ?? 0);
    column.push({ element, wanted, height: element.offsetHeight });
  }
  let bottom = 0;
  for (const { element, top, height } of stack(column)) {
    element.style.top = `${top}px`;
    bottom = top + height + GAP;
  }
  margin.style.minHeight = narrow ? "" : `${bottom}px`;
  if (focused instanceof HTMLElement && focused !== document.activeElement && focused.isConnected) focused.focus({ preventScroll: true });
}

/** The card after (`step` 1) or before (-1) `from` in page order, skipping closed ones; wraps around. */
export function neighbourCard(elements: LayoutElements, cards: ThreadCard[], from: ThreadCard | undefined, step: 1 | -1): ThreadCard | undefined {
  const marks = marksOf(elements.doc);
  const ordered = cards
    .filter((card) => marks.has(card.thread.thread_id))
    .sort((a, b) =>
      marks.get(a.thread.thread_id)!.compareDocumentPosition(marks.get(b.thread.thread_id)!) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1,
    );
  if (ordered.length === 0) return undefined;
  const index = from ? ordered.indexOf(from) : -1;
  if (index < 0) return step > 0 ? ordered[0] : ordered.at(-1);
  return ordered[(index + step + ordered.length) % ordered.length];
}
