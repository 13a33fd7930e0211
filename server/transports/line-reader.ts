/**
 * Splitting stdin into the newline-delimited messages of MCP's stdio transport, with a
 * limit on a message's size that costs the client one request, never the connection.
 *
 * The SDK's own reader keeps one buffer for everything not yet read, and when it grows
 * past its limit (10 MB) it closes the transport: one oversized call, and every later
 * call of the session fails. It also concatenates the buffer with each new chunk and
 * searches it from the start, which takes time quadratic in a message's size. Here each
 * chunk is searched once, a message is concatenated once, and a message over the limit
 * streams past without being kept: only its size and its id are (./request-id.ts).
 */
import { type RequestId, RequestIdScanner } from "./request-id.js";

const NEWLINE = 0x0a;

/** Cuts a byte stream into lines of at most `maxBytes` (newline excluded), reporting longer ones instead. */
export class LineReader {
  private pieces: Buffer[] = [];
  private size = 0;
  /** The line being skipped because it is over the limit: its size so far, and the search for its id. */
  private oversized: { bytes: number; scanner: RequestIdScanner } | undefined;

  /**
   * @param maxBytes the longest line passed on, in bytes without its newline.
   * @param onLine called with each line, without its newline.
   * @param onOversized called when a line over `maxBytes` has ended, with its size and
   *   the id of the request it held (`undefined`: none was found, or it was not a request).
   */
  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversized: (bytes: number, id: RequestId | undefined) => void,
  ) {}

  /** Reads the next chunk of the stream. Linear in its length. */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      this.take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.oversized) {
      this.oversized.bytes += piece.length;
      this.oversized.scanner.push(piece);
      return;
    }
    this.pieces.push(piece);
    this.size += piece.length;
    if (this.size <= this.maxBytes) return;
    // Over the limit: what was kept is searched for the id, then dropped; the rest streams past.
    const scanner = new RequestIdScanner();
    for (const kept of this.pieces) scanner.push(kept);
    this.oversized = { bytes: this.size, scanner };
    this.pieces = [];
    this.size = 0;
  }

  private endLine(): void {
    if (this.oversized) {
      const { bytes, scanner } = this.oversized;
      this.oversized = undefined;
      this.onOversized(bytes, scanner.id);
      return;
    }
    if (this.size === 0) return;
    const line = Buffer.concat(this.pieces, this.size);
    this.pieces = [];
    this.size = 0;
    this.onLine(line);
  }
}
