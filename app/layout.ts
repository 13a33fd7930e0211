/**
 * Placing the thread cards: in the margin level with their passage (pushed down so that
 * cards never overlap), or, on a narrow reader, right after the top-level element that
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
  let floor = 0;
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
    const wanted = mark ? mark.getBoundingClientRect().top - marginTop : floor;
    const top = Math.max(wanted, floor);
    element.style.top = `${top}px`;
    floor = top + element.offsetHeight + GAP;
  }
  margin.style.minHeight = narrow ? "" : `${floor}px`;
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
