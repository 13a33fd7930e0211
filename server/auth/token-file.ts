/**
 * The static token file of `serve --http --auth tokens`: each token maps to a
 * principal, and only its SHA-256 is kept, so a copy of the file lets nobody in.
 *
 *     {"version":1,"tokens":[{"principal":"alice","sha256":"<64 hex>","added":"<ISO time>"}]}
 *
 * Invariants: the file is mode 0600 (a file that others can read or write is refused,
 * as ssh refuses a private key); it is replaced atomically; a token is shown once, when
 * it is made, and never stored.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { CallerError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs/atomic-write.js";
import { makeFolder } from "../../core/fs/durable.js";
import { withLock } from "../../core/fs/lock.js";
import { InvalidPrincipalError, PRINCIPAL_PATTERN } from "./principal.js";

/** The token file's name in the data directory. */
export const TOKEN_FILE_NAME = "tokens.json";

/** The default token file: `tokens.json` in the data directory. */
export function defaultTokenFile(dataDir: string): string {
  return join(dataDir, TOKEN_FILE_NAME);
}

/** Thrown when the token file cannot be used: missing, unsafe or malformed. The message says what to do. */
export class TokenFileError extends CallerError {
  override readonly name = "TokenFileError";
  override readonly code = "TOKEN_FILE";
}

const tokenFileSchema = z.object({
  version: z.literal(1),
  tokens: z.array(z.object({ principal: z.string().regex(PRINCIPAL_PATTERN), sha256: z.string().regex(/^[0-9a-f]{64}$/), added: z.string() })),
});

/** The token file's content. */
export type TokenFile = z.infer<typeof tokenFileSchema>;

/**
 * Reads the token file at `path`.
 * @returns an empty list when there is no file and `missingOk` (for `token add`).
 * @throws TokenFileError when it is missing (unless `missingOk`), not a regular file,
 *   readable or writable by others, or not a token file.
 */
export function readTokenFile(path: string, missingOk = false): TokenFile {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && missingOk) return { version: 1, tokens: [] };
    if (code === "ENOENT") throw new TokenFileError(`no token file at ${path}: add a token with "backchannel token add <principal>" first`);
    if (code === "ELOOP") throw new TokenFileError(`${path} is a symbolic link; the token file must be a regular file`);
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new TokenFileError(`${path} is not a regular file`);
    if ((stats.mode & 0o077) !== 0) {
      throw new TokenFileError(`${path} can be read or written by others (mode ${(stats.mode & 0o777).toString(8)}): run "chmod 600 ${path}"`);
    }
    if (typeof process.getuid === "function" && stats.uid !== process.getuid()) {
      throw new TokenFileError(`${path} belongs to another user (uid ${stats.uid}): run "chown ${process.getuid()} ${path}" if it is yours`);
    }
    const parsed = tokenFileSchema.safeParse(safeJson(readFileSync(fd, "utf8")));
    if (!parsed.success)
      throw new TokenFileError(`${path} is not a backchannel token file (${parsed.error.issues[0]?.message}); move it aside and add tokens again`);
    return parsed.data;
  } finally {
    closeSync(fd);
  }
}

/**
 * How long the token file's lock may go untouched before it counts as left by a killed
 * `token add`: 5 s (a waiter gives up after three times as long).
 */
const TOKEN_LOCK_STALE_MS = 5000;

/**
 * Makes a new token for `principal` and stores its hash in the token file at `path`
 * (made 0600, with its folder 0700, when missing). The read and the write happen under
 * the token file's lock (core/fs/lock.ts), so that concurrent adds each keep their token.
 * @returns the token: shown once, never stored.
 * @throws InvalidPrincipalError; TokenFileError for an unusable file; LockTimeoutError
 *   when another `token add` holds the file for too long.
 */
export async function addToken(path: string, principal: string): Promise<string> {
  if (!PRINCIPAL_PATTERN.test(principal)) throw new InvalidPrincipalError(principal);
  makeFolder(dirname(path), { mode: 0o700, parents: true });
  const token = `bc_${randomBytes(32).toString("base64url")}`;
  await withLock(path, { staleMs: TOKEN_LOCK_STALE_MS }, (lock) => {
    const file = readTokenFile(path, true);
    file.tokens.push({ principal, sha256: sha256Hex(token), added: new Date().toISOString() });
    lock.assertHeld();
    writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  });
  return token;
}

/**
 * The principal `token` belongs to, or `undefined`. Compares against every entry in
 * constant time (no early exit), so timing tells nothing about which hashes match.
 */
export function principalOfToken(file: TokenFile, token: string): string | undefined {
  const presented = Buffer.from(sha256Hex(token), "hex");
  let found: string | undefined;
  for (const entry of file.tokens) {
    if (timingSafeEqual(presented, Buffer.from(entry.sha256, "hex")) && found === undefined) found = entry.principal;
  }
  return found;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
