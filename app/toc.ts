/**
 * The table of contents: a disclosure that is one tab stop while closed. A long
 * document's contents would otherwise fill the screen (and the tab order) before its
 * first line, so the list shows the top two heading levels and a button for the rest,
 * and it starts closed past {@link OPEN_UP_TO} entries.
 *
 * While a long document is still being rendered, only the summary shows, closed
 * ({@link renderTocSummary}), so that the text does not move when the list comes; the
 * list follows once every heading is in the DOM, keeping the summary (and its focus),
 * and the disclosure open if the person opened it meanwhile.
 */

/** Contents with at most this many entries start open. */
const OPEN_UP_TO = 12;

/** Shows only the summary of the contents, closed, until {@link renderToc} (the number of sections is not known yet). */
export function renderTocSummary(details: HTMLDetailsElement): void {
  details.hidden = false;
  details.open = false;
  details.dataset.pending = "";
  details.replaceChildren(summaryOf(details));
}

/** Fills `details` with the contents of `headings` (their text only), or hides it when there are none. */
export function renderToc(details: HTMLDetailsElement, headings: HTMLElement[]): void {
  const openedMeanwhile = details.dataset.pending !== undefined && details.open;
  delete details.dataset.pending;
  details.hidden = headings.length === 0;
  if (headings.length === 0) {
    details.replaceChildren();
    return;
  }
  const levels = [...new Set(headings.map((heading) => Number(heading.tagName[1])))].sort();
  const topLevels = new Set(levels.slice(0, 2));
  const summary = summaryOf(details, headings.length);
  const list = document.createElement("ol");
  for (const heading of headings) {
    const level = Number(heading.tagName[1]);
    const item = document.createElement("li");
    item.className = `toc-h${level}`;
    if (!topLevels.has(level)) item.classList.add("toc-deep");
    const link = document.createElement("a");
    link.href = `#${heading.id}`;
    link.textContent = heading.textContent;
    item.append(link);
    list.append(item);
  }
  const hiddenCount = headings.filter((heading) => !topLevels.has(Number(heading.tagName[1]))).length;
  // Not replaceChildren: the summary stays in place, so that it keeps the focus.
  for (const child of [...details.children]) if (child !== summary) child.remove();
  if (summary.parentElement !== details) details.prepend(summary);
  details.append(list);
  if (hiddenCount > 0) {
    list.classList.add("top-only");
    const more = document.createElement("button");
    more.type = "button";
    more.className = "toc-more";
    more.textContent = `Show all ${headings.length} sections`;
    more.setAttribute("aria-expanded", "false");
    more.addEventListener("click", () => {
      const topOnly = list.classList.toggle("top-only");
      more.textContent = topOnly ? `Show all ${headings.length} sections` : "Show the main sections only";
      more.setAttribute("aria-expanded", String(!topOnly));
    });
    details.append(more);
  }
  details.open = openedMeanwhile || (headings.length - hiddenCount <= OPEN_UP_TO && hiddenCount === 0);
}

/** The summary of `details` (the one already there, so that its focus stays), saying how many sections there are when known. */
function summaryOf(details: HTMLDetailsElement, count?: number): HTMLElement {
  const summary = details.querySelector("summary") ?? document.createElement("summary");
  summary.textContent = count === undefined ? "Contents" : `Contents (${count} section${count === 1 ? "" : "s"})`;
  return summary;
}
