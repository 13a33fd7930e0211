/**
 * The reader's tools (docs/reader.md): `open_reader` for the model, which stores the
 * document and renders the reader, and two app-only tools through which a reader
 * (re-)rendered in any process restores itself and records its threads. The
 * document never travels back to the model.
 */
import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer, StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { mintChannelId } from "../../core/ids.js";
import type { ChannelStore } from "../../store/store.js";
import { Awareness } from "../awareness/awareness.js";
import type { ReaderDocument } from "../../protocol/reader.js";
import { storeMaxMessageBytes } from "../reader/ask-history.js";
import { compressedDocument } from "../reader/compressed-document.js";
import { readReaderState, recordDraft, recordMessage, writeDocument, writePosition } from "../reader/reader-state.js";
import { READER_APP, registerBuiltApp } from "../apps/resource.js";
import {
  openReaderInput,
  openReaderOutput,
  openReaderRemoteInput,
  type OpenReaderArgs,
  NO_PATH_HERE,
  positionSchema,
  readerPositionInput,
  readerRecordInput,
  readerRecordOutput,
  readerStateInput,
  readerStateOutput,
} from "../reader/schemas.js";
import { askForDocument, type DocumentAnswer } from "../reader/ask-document.js";
import { chooseTitle, countWords, DEFAULT_MAX_FILE_BYTES, readDocumentFile, type DocumentSource } from "../reader/source.js";
import type { BrowserLinks } from "../browser-links.js";
import { type ClientView, FULL_VIEW } from "../client-view.js";
import { registerAppOnlyTool } from "./app-only.js";
import { openedChannel } from "./opened-channel.js";
import { guarded, messageError, toolResult } from "./results.js";
import { compactSchema } from "./schemas.js";

/** Options of {@link registerReaderTools}. */
export interface ReaderToolOptions {
  /**
   * The words of `watch_command` that name the store (see `watchCommand` in
   * core/commands.ts): `--url <endpoint>` for an agent that watches through this server,
   * `--store-file`, `--store` or `--home` for the local watcher of a store the agent's
   * shell would not find on its own. Default none: the watcher's environment chooses.
   */
  watcherWhere?: readonly string[];
  /**
   * Whether `open_reader` may read a local file (`path`). Default true, right for stdio,
   * where the server runs as the user on the user's machine; the HTTP transport turns it off.
   */
  readLocalFiles?: boolean;
  /** Largest local file `open_reader` reads. Default 1 MiB. */
  maxFileBytes?: number;
  /** The reader's HTML file. Default: the built `dist/app/reader.html`. */
  readerHtmlPath?: string;
  /** The server's awareness (see `ChannelToolOptions.awareness`). Default: these tools' own. */
  awareness?: Awareness;
  /** What the client can do (../client-view.ts): where `open_reader` shows the reader, and what it says to do next. Default: everything. */
  client?: ClientView;
  /** The browser host's links, for a client that shows no apps. Default none: such a client is told the reader cannot be shown. */
  browser?: BrowserLinks;
  /**
   * The largest message the store accepts, which `reader_state` tells the reader so that
   * it keeps every `ask` within it. Default: the store's own `limits` when it has them
   * (the file store does), else `DEFAULT_LIMITS.maxMessageBytes`.
   */
  maxMessageBytes?: number;
}

/** Where `open_reader`'s document comes from: at most one of the three. */
type DocumentRequest = { markdown?: string; text?: string; path?: string };

/** How a caller passes a document: `path` only where local files may be read, so that no message offers what the transport refuses. */
function documentArguments(readLocalFiles: boolean): string {
  return readLocalFiles ? "markdown, text or path" : "markdown or text";
}

/** What `open_reader` tells the model when the user was not asked, or gave no usable answer. */
function unanswered(answer: Exclude<DocumentAnswer, { action: "accept" | "ask" }>, readLocalFiles: boolean): string {
  const pass = documentArguments(readLocalFiles);
  switch (answer.action) {
    case "unsupported":
      return `give the document to show as ${pass} (this client cannot ask the user for one)`;
    case "decline":
      return "the user declined to open a document in the reader: go on without it, and do not ask again unless they bring it up";
    case "cancel":
      return (
        "the user did not answer (they dismissed the question, or this client cannot ask: a non-interactive run answers cancel); " +
        `ask in the chat for the document, then call open_reader with ${pass}`
      );
    case "invalid":
      return `the client's answer to the question did not fit its form (${answer.problem}); ask in the chat for the document, then call open_reader with ${pass}`;
  }
}

/**
 * Registers `open_reader`, the app-only `reader_state`, `reader_record` and `reader_position`, and the
 * `ui://backchannel/reader.html` resource on `server`, backed by `store`.
 */
export function registerReaderTools(server: McpServer, store: ChannelStore, options: ReaderToolOptions = {}): void {
  const awareness = options.awareness ?? new Awareness(server, store);
  const readLocalFiles = options.readLocalFiles ?? true;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxMessageBytes = options.maxMessageBytes ?? storeMaxMessageBytes(store);
  const openReaderSchema: StandardSchemaWithJSON<OpenReaderArgs, OpenReaderArgs> = readLocalFiles ? openReaderInput : openReaderRemoteInput;

  registerBuiltApp(server, READER_APP, options.readerHtmlPath);

  registerAppTool(
    server,
    "open_reader",
    {
      title: "Open the reader",
      description:
        `Show a document (markdown, text${readLocalFiles ? ", or path: a local file" : ""}; none: ask the user) in the reader, under title. ` +
        "The user's asks arrive on the returned channel (or channel_id, reused).",
      inputSchema: compactSchema(openReaderSchema),
      outputSchema: compactSchema(openReaderOutput),
      _meta: { ui: { resourceUri: READER_APP.uri } },
    },
    guarded(async ({ title, markdown, text, path, channel_id }, ctx) => {
      let given: DocumentRequest = { markdown, text, path };
      if (markdown === undefined && text === undefined && path === undefined) {
        const canAsk = server.server.getClientCapabilities()?.elicitation !== undefined;
        const answer = await askForDocument(ctx, canAsk, readLocalFiles);
        if (answer.action === "ask") return answer.result;
        if (answer.action !== "accept") return messageError("NO_DOCUMENT", unanswered(answer, readLocalFiles));
        // A form sends empty fields as "": they mean nothing was given.
        given = answer.path?.trim() ? { path: answer.path.trim() } : { markdown: answer.text ?? "" };
      }
      let source: DocumentSource;
      if (given.path !== undefined) {
        if (!readLocalFiles) return messageError("INVALID_ARGUMENTS", NO_PATH_HERE);
        source = await readDocumentFile(given.path, maxFileBytes);
      } else if (given.markdown !== undefined) {
        source = { format: "markdown", text: given.markdown };
      } else {
        source = { format: "text", text: given.text ?? "" };
      }
      if (source.text.trim() === "") return messageError("NO_DOCUMENT", "the document is empty: pass some markdown or text to read");
      const channelId = channel_id ?? mintChannelId();
      const client = options.client ?? FULL_VIEW;
      const document: ReaderDocument = {
        title: chooseTitle(source, title),
        format: source.format,
        text: source.text,
        words: countWords(source.text),
        opened_at: new Date().toISOString(),
        ...(client.wake === "hook" ? { woken_by: "hook" as const } : {}),
      };
      await writeDocument(store, channelId, document);
      await awareness.useChannel(channelId, "reader", true, document.title);
      const opened = await openedChannel("reader", channelId, { ...options, client });
      return toolResult(
        { channel_id: channelId, title: document.title, words: document.words, ...opened.structured },
        `Opened "${document.title}" (${document.words} words) in the reader on channel ${channelId}. ${opened.next}`,
      );
    }),
  );

  registerAppOnlyTool(
    server,
    "reader_state",
    {
      title: "Reader state (app only)",
      description: "App only: the document and threads of a reader channel, to restore a re-rendered reader.",
      inputSchema: compactSchema(readerStateInput),
      outputSchema: compactSchema(readerStateOutput),
    },
    guarded(async ({ channel_id, gzip }) => {
      const state = await readReaderState(store, channel_id, { max_message_bytes: maxMessageBytes, browser_tab: options.browser !== undefined });
      const { document, threads } = state;
      const summary = document ? `"${document.title}" with ${threads.length} thread${threads.length === 1 ? "" : "s"}` : "no document";
      return toolResult(
        { ...state, document: document && gzip ? await compressedDocument(document) : document },
        `Reader state of channel ${channel_id}: ${summary}.`,
      );
    }),
  );

  registerAppOnlyTool(
    server,
    "reader_record",
    {
      title: "Record a thread message (app only)",
      description: "App only: store one message of a reader thread, or the question typed in it, so that it survives a re-render.",
      inputSchema: compactSchema(readerRecordInput),
      outputSchema: compactSchema(readerRecordOutput),
    },
    guarded(async ({ channel_id, thread_id, quote, paragraph, anchor, message, withdraw, draft }) => {
      if (draft) {
        const outcome = await recordDraft(store, channel_id, { thread_id, quote, paragraph, anchor, ...draft });
        const done = outcome.recorded ? (draft.text === "" ? "Dropped the draft of" : "Kept the draft of") : "A newer message left the draft of";
        return toolResult({ ...outcome }, `${done} thread ${thread_id}${outcome.recorded ? "" : " unchanged"}.`);
      }
      // The input's refinement leaves a message when there is no draft.
      const outcome = await recordMessage(store, channel_id, { threadId: thread_id, quote, paragraph, anchor, message: message!, withdraw });
      const done = withdraw
        ? outcome.recorded
          ? "Withdrawn from"
          : "Nothing to withdraw in"
        : outcome.recorded
          ? "Recorded in"
          : "Already recorded in";
      return toolResult({ ...outcome }, `${done} thread ${thread_id}.`);
    }),
  );

  registerAppOnlyTool(
    server,
    "reader_position",
    {
      title: "Keep the reading position (app only)",
      description: "App only: keep which block of a reader channel's document is at the top, so that a re-rendered reader scrolls back there.",
      inputSchema: compactSchema(readerPositionInput),
      outputSchema: compactSchema(positionSchema),
    },
    guarded(async ({ channel_id, block }) => {
      await writePosition(store, channel_id, { block });
      return toolResult({ block }, `Kept block ${block} as the reading position of channel ${channel_id}.`);
    }),
  );
}
