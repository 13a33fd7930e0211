/**
 * Finding the `id` of a JSON-RPC request in text too large to keep: the stdio reader
 * (./line-reader.ts) answers a request it will not read with an error, and a response
 * must carry the request's id. The id may come anywhere among the request's keys (the
 * SDK's client writes it last, after the params), so the whole text streams through
 * here once, and only the id's own few bytes are kept.
 *
 * Not a JSON parser: it tracks strings, escapes and nesting depth, which is all it takes
 * to tell the top-level `"id"` key from the same bytes inside a string or a nested
 * object. It reads bytes: every byte it acts on (`"`, `\`, `{`, `}`, `[`, `]`, `:`, `,`)
 * is ASCII, and UTF-8 never uses an ASCII byte inside a multi-byte character.
 */

/** A JSON-RPC request id. */
export type RequestId = string | number;

/** Longest id kept, in bytes of its JSON text; a longer one is given up on (the request then gets no answer). */
const MAX_ID_BYTES = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Scans one JSON text, pushed in any number of pieces, for the `id` member of its top-level object. */
export class RequestIdScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At depth 1, whether the next string is a key (after `{` or `,`). */
  private expectKey = false;
  /** The bytes of the depth-1 key being read, up to three (enough to tell `id` from anything else). */
  private key: number[] | undefined;
  /** The last depth-1 key was `id`, and its value comes next (after the `:`). */
  private idValueNext = false;
  private idKey = false;
  /** The bytes of the id's value being read, and whether it is a string. */
  private value: { bytes: number[]; isString: boolean } | undefined;
  private finished = false;
  private found: RequestId | undefined;

  /** The id, once it has streamed by whole; `undefined` before, and for a text without a usable one. */
  get id(): RequestId | undefined {
    return this.found;
  }

  /**
   * Scans the next piece of the text. Linear in its length; does nothing once the id was
   * found or given up on. Inside a string that is not being kept, it jumps from one `"`
   * or `\` to the next (found natively, each position searched once): the bulk of a
   * large request is string content.
   */
  push(piece: Buffer): void {
    let nextQuote = -2; // where the next `"` is in this piece at or after i, -1 for none; -2: not searched yet
    let nextBackslash = -2;
    for (let i = 0; i < piece.length && !this.finished; i++) {
      if (this.inString && !this.escaped && !this.key && !this.value) {
        if (nextQuote !== -1 && nextQuote < i) nextQuote = piece.indexOf(QUOTE, i);
        if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = piece.indexOf(BACKSLASH, i);
        i = Math.min(nextQuote === -1 ? piece.length : nextQuote, nextBackslash === -1 ? piece.length : nextBackslash);
        if (i === piece.length) return;
      }
      this.scan(piece[i]!);
    }
  }

  private scan(byte: number): void {
    if (this.inString) {
      this.scanString(byte);
    } else if (this.value && !this.value.isString && !endsNumber(byte)) {
      this.keep(byte);
    } else {
      // A number (or a literal) ends at the first byte that cannot be part of it.
      if (this.value) this.settle();
      if (!this.finished && !isJsonSpace(byte)) this.scanStructure(byte);
    }
  }

  /** A byte outside strings (and outside the id's number). */
  private scanStructure(byte: number): void {
    if (this.depth === 0 && byte !== OPEN_BRACE) {
      // The text must be one object: a batch or a bare value has no id to find.
      this.giveUp();
    } else if (byte === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) this.key = [];
      else if (this.depth === 1 && this.idValueNext) this.value = { bytes: [], isString: true };
    } else if (this.idValueNext && this.depth === 1 && byte !== COLON) {
      // Not a string: a number, or something no id can be (an object, an array, a literal).
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.giveUp();
      else this.value = { bytes: [byte], isString: false };
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      this.depth += 1;
      this.expectKey = this.depth === 1;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      this.depth -= 1;
      if (this.depth <= 0) this.giveUp();
    } else if (this.depth === 1 && byte === COLON) {
      this.expectKey = false;
      this.idValueNext = this.idKey;
      this.idKey = false;
    } else if (this.depth === 1 && byte === COMMA) {
      this.expectKey = true;
    }
  }

  private scanString(byte: number): void {
    const ends = !this.escaped && byte === QUOTE;
    this.escaped = !this.escaped && byte === BACKSLASH;
    if (!ends) {
      if (this.key && this.key.length < 3) this.key.push(byte);
      if (this.value) this.keep(byte);
    } else {
      this.inString = false;
      if (this.key) this.idKey = this.key.length === 2 && this.key[0] === 0x69 && this.key[1] === 0x64; // "id"
      this.key = undefined;
      if (this.value) this.settle();
    }
  }

  private keep(byte: number): void {
    if (this.value!.bytes.length >= MAX_ID_BYTES) this.giveUp();
    else this.value!.bytes.push(byte);
  }

  /** Turns the bytes of the id's value into the id: a string or a number, else nothing. */
  private settle(): void {
    const { bytes, isString } = this.value!;
    const text = Buffer.from(bytes).toString("utf8");
    let id: unknown;
    try {
      id = JSON.parse(isString ? `"${text}"` : text);
    } catch {
      id = undefined;
    }
    this.found = typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
    this.finished = true;
  }

  private giveUp(): void {
    this.found = undefined;
    this.finished = true;
  }
}

/** Whether `byte` cannot be part of a number or literal: it ends the id's value. */
function endsNumber(byte: number): boolean {
  return byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isJsonSpace(byte);
}

/** JSON's white space: space, tab, line feed, carriage return. */
function isJsonSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}
