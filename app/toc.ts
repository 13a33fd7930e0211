/**
 * The table of contents: a disclosure that is one tab stop while closed. A long
 * document's contents would otherwise fill the screen (and the tab order) before its
 * first line, so the list shows the top two heading levels and a button for the rest,
 * and it starts closed past {@link OPEN_UP_TO} entries.
 */

/** Contents with at most this many entries start open. */
const OPEN_UP_TO = 12;

/** Fills `details` with the contents of `headings` (their text only), or hides it when there are none. */
export function renderToc(details: HTMLDetailsElement, headings: HTMLElement[]): void {
  details.hidden = headings.length === 0;
  if (headings.length === 0) {
    details.replaceChildren();
    return;
  }
  const levels = [...new Set(headings.map((heading) => Number(heading.tagName[1])))].sort();
  const topLevels = new Set(levels.slice(0, 2));
  const summary = document.createElement("summary");
  summary.textContent = `Contents (${headings.length} section${headings.length === 1 ? "" : "s"})`;
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
  details.replaceChildren(summary, list);
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
  details.open = headings.length - hiddenCount <= OPEN_UP_TO && hiddenCount === 0;
}
