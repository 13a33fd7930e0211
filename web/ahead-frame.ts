/**
 * The reader's frame as the browser host serves it on a link (web/page-files.ts,
 * `AHEAD_FRAME`): the reader's HTML with the channel's state and its document already
 * rendered in (app/document-html.ts). The reader adopts both (app/main.ts): it shows the
 * whole document as soon as its script runs, with no round trip to the page and no
 * rendering of its own.
 */
import { AHEAD_STATE_ELEMENT, type AheadReaderState } from "../protocol/reader.js";
import { documentChunks } from "../app/document-html.js";
import type { FullReaderState } from "../server/reader/reader-state.js";

/** Where the reader's HTML holds its document: the element the rendered chunks go into. */
const DOCUMENT_ELEMENT = /<article id="doc"[^>]*>/;

/**
 * `readerHtml` with `state` in it, in parts to be sent as they are made: the HTML up to
 * `#doc` first (the browser compiles the reader's script, in its head, while the rest is
 * made), then the document's chunks, then the rest with the state in a JSON script
 * element (`<` escaped, so that no text in it can end the element). `readerHtml` whole
 * when there is no document to put in, or when it has no `#doc` (a reader of another build).
 */
export function* aheadReaderParts(readerHtml: string, state: FullReaderState): Generator<string> {
  const { document, ...rest } = state;
  const at = DOCUMENT_ELEMENT.exec(readerHtml);
  const chunks = document && at ? documentChunks(document) : null;
  if (!document || !at || !chunks) {
    yield readerHtml;
    return;
  }
  const { text: _rendered, ...described } = document;
  const ahead: AheadReaderState = { ...rest, document: described };
  const end = at.index + at[0].length;
  yield readerHtml.slice(0, end);
  yield* chunks;
  const json = JSON.stringify(ahead).replace(/</g, "\\u003c");
  yield readerHtml.slice(end).replace(/<\/body>/i, () => `<script type="application/json" id="${AHEAD_STATE_ELEMENT}">${json}</script></body>`);
}
