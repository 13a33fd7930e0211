/**
 * The per-channel state documents that name a channel, shared by the server that writes
 * them and the watcher that reads them: the reader's document (`reader-document`, a
 * {@link ReaderDocument}) and the app open on a channel (`app`, server/apps/channel-app.ts).
 * Both hold the title the channel was opened with.
 */
import type { ReaderDocument } from "./reader.js";

/** The state document that holds the reader's document. */
export const READER_DOCUMENT_STATE = "reader-document";

/** The state document that holds the app open on a channel. */
export const APP_STATE = "app";

/** The state documents whose `title` names their channel, in the order they are asked: a channel holds one of them. */
export const TITLED_STATES = [READER_DOCUMENT_STATE, APP_STATE] as const;

/** The title a state document holds: its `title` when that is a string that is not blank, else `undefined`. */
export function stateTitle(state: unknown): string | undefined {
  const title = typeof state === "object" && state !== null ? (state as Partial<Pick<ReaderDocument, "title">>).title : undefined;
  return typeof title === "string" && title.trim() !== "" ? title : undefined;
}
