/**
 * The reader's app-only tools on the server: `reader_state` (the document, the threads,
 * their drafts and the reading position, to restore a re-rendered reader),
 * `reader_record` (store or withdraw one message of a thread, or keep the question typed
 * in it) and `reader_position` (keep where the person reads).
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import type { ReaderDocument, ReaderState, ReaderStateDocument, ReaderThread, ThreadDraft, ThreadRole } from "../protocol/reader.js";
import { textOf } from "./channel.js";

/** The reader's state with its document's text decoded. */
export type RestoredState = Omit<ReaderState, "document"> & { document: ReaderDocument | null };

/** Whether this browser can gunzip (DecompressionStream: Chromium 80, Safari 16.4, Firefox 113); else the text comes as it is. */
const CAN_GUNZIP = typeof DecompressionStream === "function";

/** The reader's state tools, for one channel at a time. */
export class ReaderServer {
  /** The channel in use; set before any call. */
  channelId = "";

  constructor(private readonly app: App) {}

  /**
   * The document and threads of the channel. The document's text comes compressed where
   * the browser can gunzip it: hosts that log what they relay pay for its size again
   * with every later message (protocol/reader.ts, `ReaderStateDocument`).
   * @throws Error with the server's or host's message when the call fails, or when the
   * compressed text cannot be decoded.
   */
  async readState(): Promise<RestoredState> {
    const result = await this.app.callServerTool({
      name: "reader_state",
      arguments: { channel_id: this.channelId, ...(CAN_GUNZIP ? { gzip: true } : {}) },
    });
    if (result.isError) throw new Error(textOf(result.content));
    const state = result.structuredContent as ReaderState;
    return { ...state, document: state.document && (await decoded(state.document)) };
  }

  /**
   * Stores one message of `thread` (idempotent by `id`); with `withdraw`, removes it
   * again while it is the thread's last (a question that could not be sent). The call
   * leaves at once: the returned promise only reports how it went.
   * @throws Error with the server's or host's message when the call fails.
   */
  async record(thread: ReaderThread, id: string, role: ThreadRole, text: string, withdraw = false): Promise<void> {
    const result = await this.app.callServerTool({
      name: "reader_record",
      arguments: {
        channel_id: this.channelId,
        thread_id: thread.thread_id,
        quote: thread.quote,
        paragraph: thread.paragraph,
        anchor: thread.anchor,
        message: { id, role, text },
        ...(withdraw ? { withdraw: true } : {}),
      },
    });
    if (result.isError) throw new Error(textOf(result.content));
  }

  /**
   * Keeps `block` as the block at the top of the reader, for the next render.
   * @throws Error with the server's or host's message when the call fails.
   */
  async savePosition(block: number): Promise<void> {
    const result = await this.app.callServerTool({ name: "reader_position", arguments: { channel_id: this.channelId, block } });
    if (result.isError) throw new Error(textOf(result.content));
  }

  /**
   * Keeps the question typed in a thread (an empty text drops it). Resolves false when
   * the server refused it because the thread has a newer message than `draft.after`.
   * @throws Error with the server's or host's message when the call fails.
   */
  async saveDraft(draft: ThreadDraft): Promise<boolean> {
    const { thread_id, quote, paragraph, anchor, text, after } = draft;
    const result = await this.app.callServerTool({
      name: "reader_record",
      arguments: { channel_id: this.channelId, thread_id, quote, paragraph, anchor, draft: { text, after } },
    });
    if (result.isError) throw new Error(textOf(result.content));
    return (result.structuredContent as { recorded?: unknown } | undefined)?.recorded === true;
  }
}

/** `document` with its text as it is, gunzipped from `text_gzip` when it came compressed. */
async function decoded(document: ReaderStateDocument): Promise<ReaderDocument> {
  const { text, text_gzip, ...rest } = document;
  if (text_gzip === undefined) return { ...rest, text: text ?? "" };
  // A plain loop: `Uint8Array.from(binary, mapFn)` calls the function per byte, 30 ms for a 718 KB manual's 233 KB, not 2.
  const binary = atob(text_gzip);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return { ...rest, text: await new Response(stream).text() };
}
