/**
 * Cutting rendered text short between two lines, never through one. A box cut at a
 * fixed height (a number of `em`) cuts through a line as soon as its content is not
 * one paragraph of one line height: a paragraph's margin, a heading, a list or a code
 * block shifts every line after it. So the height is measured: the lines of the content
 * are read from the layout (each text node's line boxes), and the cut goes into the gap
 * between the last line that fits and the next.
 */

/** A stretch of height that one line of text (or an element that is not text) takes: it must not be cut. */
interface Band {
  top: number;
  bottom: number;
}

/** Sub-pixel slack when comparing the edges of two line boxes. */
const SLACK_PX = 0.5;

/** Elements whose box is one piece on screen, with no text inside to measure. */
const SOLID = "img, svg, canvas, video, iframe, input, textarea, select, hr";

/**
 * The height at which to cut `content` (its border box, from its top) so that every line
 * of its text lies wholly above or below the cut: at most `budget` px, or, when even its
 * first line is taller than that, just below its first line.
 * @returns `null` when the content is no taller than `budget`, or when every line fits
 *   within it (what is below is only margin): then nothing need be cut.
 */
export function wholeLineCut(content: HTMLElement, budget: number): number | null {
  if (content.scrollHeight <= budget + SLACK_PX) return null;
  const bands = bandsOf(content).sort((a, b) => a.top - b.top);
  if (bands.length === 0) return budget;
  // Sweep down the bands; `reach` is the lowest bottom seen so far. Where the next band
  // starts at or below it, the gap between the two cuts no line.
  let reach = bands[0]!.bottom;
  let cut: number | undefined;
  for (const band of bands.slice(1)) {
    if (band.top + SLACK_PX >= reach) {
      if (reach > budget) return cut ?? reach;
      // Half-way through the gap, so that the line above keeps its descenders in view.
      cut = Math.min((reach + band.top) / 2, budget);
    }
    reach = Math.max(reach, band.bottom);
  }
  // Every line ends within the budget: only a margin or padding is below.
  if (reach <= budget + SLACK_PX) return null;
  return cut ?? reach;
}

/** The line height of `element`'s text in px (its computed `line-height`, or 1.2 times its font size for `normal`). */
export function lineHeightOf(element: HTMLElement): number {
  const style = getComputedStyle(element);
  const height = Number.parseFloat(style.lineHeight);
  return Number.isFinite(height) ? height : 1.2 * Number.parseFloat(style.fontSize);
}

/** The bands of `content`'s lines and solid elements, from the top of its border box, in px. */
function bandsOf(content: HTMLElement): Band[] {
  const origin = content.getBoundingClientRect().top;
  const bands: Band[] = [];
  const add = (rect: DOMRect) => {
    if (rect.height > 0) bands.push({ top: rect.top - origin, bottom: rect.bottom - origin });
  };
  const range = document.createRange();
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if ((node as Text).data.trim() === "") continue;
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) add(rect);
  }
  for (const element of content.querySelectorAll(SOLID)) add(element.getBoundingClientRect());
  return bands;
}
