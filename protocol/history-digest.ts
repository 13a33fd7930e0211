/**
 * The digest that names a thread's history in an ask sent without it
 * (protocol/reader.ts, `AskBySend`): the reader computes it from the turns it shows,
 * the server from the turns it recorded, and the server fills the history in only when
 * both agree. It guards against a mismatch (a turn not recorded yet), not an attacker:
 * the reader and the server are the same principal, and the history is the server's own
 * record. cyrb53 (two 32-bit lanes, 53 bits) over the JSON of the turns' roles and
 * texts, so browser and Node compute it alike without an async crypto API.
 */
import type { HistoryEntry } from "./reader.js";

/** The digest of `history` (only `role` and `text` count), as 14 hex digits. */
export function historyDigest(history: readonly HistoryEntry[]): string {
  const text = JSON.stringify(history.map(({ role, text }) => [role, text]));
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}
