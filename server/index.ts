/**
 * backchannel as a library (`backchannel-mcp/server`): put the channel tools on any
 * `McpServer`, over the file store, the Redis store, or a store of your own.
 *
 * ```ts
 * const { store } = await openStore(storeLocationFromEnv()); // BACKCHANNEL_STORE, else the file store
 * registerChannelTools(server, store);
 * ```
 */
export { registerChannelTools, type ChannelToolOptions } from "./tools/channel-tools.js";
export { createServer, type ServerOptions } from "./server.js";
export { FileStore, type FileStoreOptions } from "../store/file/file-store.js";
export type { AppendResult, ChannelInfo, ChannelStore, PollOptions, PollResult } from "../store/store.js";
export {
  bannerLocation,
  describeLocation,
  openStore,
  type OpenedStore,
  type OpenStoreOptions,
  type StoreLocation,
  storeLocationFromEnv,
  watcherWhere,
} from "../store/open.js";
export type { JsonValue, QueueMessage } from "../protocol/message.js";
export type { Wall } from "../protocol/wall.js";
export { MessageTooLargeError, QueueFullError, StateTooLargeError } from "../store/errors.js";
export { LockLostError, LockTimeoutError } from "../core/fs/errors.js";
export { CHANNEL_ID_PATTERN, EVENT_PATTERN, InvalidChannelIdError, InvalidEventError, mintChannelId } from "../core/ids.js";
export { DEFAULT_LIMITS, type Limits } from "../core/limits.js";
export { resolveDataDir, type QueueName } from "../core/paths.js";
export { watchCommand, type WatchCommandOptions } from "../core/commands.js";
export { registerReaderTools, type ReaderToolOptions } from "./tools/reader-tools.js";
export { READER_RESOURCE_URI } from "./apps/resource.js";
export type { AnswerData, AskData, HistoryEntry, ReaderDocument, ReaderState, ReaderThread, StatusData } from "../protocol/reader.js";
export { createMcpRequestListener, listen, MCP_PATH, type ListenOptions, type RequestListener } from "./transports/http.js";
