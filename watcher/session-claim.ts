/**
 * One waiting session watcher per host session. Claude Code starts the wake hook after
 * every turn, whether or not the last one still waits; the newest takes the session's
 * claim file (core/paths.ts `watcherClaimFile`) and ends the one before it, so a long
 * session never piles up watchers.
 *
 * The claim also keeps, per channel, the highest seq a watcher has woken the agent
 * for, with its queue's epoch (protocol/epoch.ts: a queue that started again has new
 * seqs, which the old mark says nothing of). A message the agent was told of and left waiting does not wake it again: a
 * wake that the model does not act on would otherwise end in a Stop that wakes it at
 * once, in a loop. Such a message is shown again with the next one that does wake.
 *
 * Invariant: a watcher wakes the agent only while the claim names it (checked just
 * before it wakes), so of two watchers racing for one session at most one wakes. Taking,
 * announcing and releasing each read and rewrite the claim under its lock
 * (core/fs/lock.ts), so none writes over what another wrote between its read and its
 * write: a mark just announced is never lost to a newer watcher's take, which would
 * wake the agent again for the same message (Codex CLI's waker outlives the turn it
 * woke, and the next Stop hook's waker takes the claim while it may be announcing).
 *
 * The claim is a file of the data directory like the store's, reached the same way
 * (core/fs/safe-open.ts): `watchers/` is a real folder of this user (a link or a file in
 * its place is moved aside), the claim is opened without following a link or blocking
 * (a named pipe there is moved aside, never waited on), and one that another user owns
 * or can write is refused, never trusted for its marks.
 */
import { readFileSync } from "node:fs";
import { moveAside } from "../core/fs/aside.js";
import { writeFileAtomic } from "../core/fs/atomic-write.js";
import { FileTooLargeError, NotRegularFileError } from "../core/fs/errors.js";
import { withLock } from "../core/fs/lock.js";
import { reachFolder, readTextFile } from "../core/fs/safe-open.js";
import { watcherClaimFile, watchersDir } from "../core/paths.js";
import { isEpoch, type SeqMark } from "../protocol/epoch.js";

/** The largest claim file read: a mark is under 100 bytes, so this holds thousands of channels' marks. */
const CLAIM_MAX_BYTES = 256 * 1024;

/** How long the claim's lock may look unchanged before a waiter that cannot check its holder breaks it: it is held for one read and one write. */
const CLAIM_LOCK_STALE_MS = 10_000;

/** Per channel id, the highest seq the agent has been woken for, in its queue's epoch. */
export type Announced = Record<string, SeqMark>;

/** What the claim file holds. */
interface ClaimRecord {
  pid: number;
  announced: Announced;
}

/** The claim of one session's watcher, held by the process `pid` (default: this one). */
export class SessionClaim {
  /** The claim file, `watchers/<key>.json` in the data directory. */
  readonly path: string;

  /**
   * @param dataDir the data directory the claim is kept in.
   * @param key the session key.
   * @param warn where something moved out of the claim's way is reported.
   * @throws Error when `key` is not a session key.
   */
  constructor(
    readonly dataDir: string,
    key: string,
    private readonly warn: (line: string) => void,
    readonly pid: number = process.pid,
  ) {
    this.path = watcherClaimFile(dataDir, key);
  }

  /**
   * Takes the claim from whoever held it, and ends that watcher when it still runs
   * (SIGTERM; on Linux only, where `/proc` tells that the pid is a session watcher and
   * not a process that reused it; elsewhere it notices at its next check and exits).
   * What is not a claim file in its place (a named pipe, a link, a folder, a file larger
   * than a claim) is moved aside and reported, and the claim starts with no marks.
   * @returns what the agent had been woken for so far.
   * @throws UnsafeLayoutError (the claim or a folder above it is another user's or
   *   writable by others); LockTimeoutError (the claim's lock stayed held); I/O errors
   *   (the claim's folder cannot be made or written).
   */
  async take(): Promise<Announced> {
    reachFolder(this.dataDir, watchersDir(this.dataDir), { create: true, warn: this.warn });
    const before = await this.locked(() => {
      const record = this.readOrClear();
      writeClaim(this.path, { pid: this.pid, announced: record?.announced ?? {} });
      return record;
    });
    if (before && before.pid !== this.pid && isSessionWatcher(before.pid)) {
      try {
        process.kill(before.pid, "SIGTERM");
      } catch {
        // It ended on its own meanwhile.
      }
    }
    return before?.announced ?? {};
  }

  /** The claim before this watcher's; what is in its place and is not a claim file is moved aside first. */
  private readOrClear(): ClaimRecord | undefined {
    try {
      return readClaim(this.path);
    } catch (error) {
      if (!(error instanceof NotRegularFileError || error instanceof FileTooLargeError)) throw error;
      this.warn(`${error.message}: moved it aside to ${moveAside(this.path, "foreign")}`);
      return undefined;
    }
  }

  /**
   * Whether the claim still names this watcher (a newer one has not taken it).
   * @throws as {@link readClaim}: what took the claim's place is not a claim.
   */
  holds(): boolean {
    return readClaim(this.path)?.pid === this.pid;
  }

  /**
   * Records that the agent is being woken for `marks` (merged into what was announced)
   * and gives the claim up in the same write: a watcher ends with the wake, and the
   * wake waits for this write, so it is one durable write, not two (see {@link release}).
   * @returns false, writing nothing, when the claim is no longer this watcher's.
   * @throws LockTimeoutError (the claim's lock stayed held); I/O errors.
   */
  announce(marks: Announced): Promise<boolean> {
    return this.locked(() => {
      const current = readClaim(this.path);
      if (current?.pid !== this.pid) return false;
      writeClaim(this.path, { pid: 0, announced: { ...current.announced, ...marks } });
      return true;
    });
  }

  /**
   * Gives the claim up when this watcher still holds it, keeping what was announced for
   * the next one, so that no later process that reuses this pid is taken for its holder.
   * Never throws: a claim left behind names a process that has ended.
   */
  async release(): Promise<void> {
    try {
      await this.locked(() => {
        const current = readClaim(this.path);
        if (current?.pid === this.pid) writeClaim(this.path, { pid: 0, announced: current.announced });
      });
    } catch {
      // Left as it was: the next watcher finds no live session watcher by that pid, or a later one, as above.
    }
  }

  /** Runs `action` (one read and one write of the claim) under the claim's lock. */
  private locked<T>(action: () => T): Promise<T> {
    return withLock(this.path, { staleMs: CLAIM_LOCK_STALE_MS, warn: this.warn }, action);
  }
}

/**
 * The claim in the file at `path` (read through core/fs/safe-open.ts); `undefined` when
 * there is none or it does not parse as one (then nothing was announced).
 * @throws NotRegularFileError, FileTooLargeError, UnsafeLayoutError: something that must not be read is there.
 */
function readClaim(path: string): ClaimRecord | undefined {
  const text = readTextFile(path, CLAIM_MAX_BYTES);
  if (text === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, announced } = value as Partial<ClaimRecord>;
  if (!Number.isSafeInteger(pid)) return undefined;
  const marks: Announced = {};
  if (typeof announced === "object" && announced !== null) {
    for (const [channel, mark] of Object.entries(announced)) {
      const { seq, epoch } = (typeof mark === "object" && mark !== null ? mark : {}) as Partial<SeqMark>;
      if (Number.isSafeInteger(seq) && isEpoch(epoch)) marks[channel] = { seq: seq as number, epoch };
    }
  }
  return { pid: pid as number, announced: marks };
}

/** Replaces the claim file in one step (core/fs/atomic-write.ts), so that no reader sees half of one. */
function writeClaim(path: string, record: ClaimRecord): void {
  writeFileAtomic(path, JSON.stringify(record));
}

/** The `backchannel hook` commands that are session watchers: Claude Code's wake hook, Gemini CLI's, Codex's waker. */
const WATCHING_HOOKS = ["stop", "after-agent", "codex-wake"];

/** Whether process `pid` is a session watcher (`watch --session` or one of {@link WATCHING_HOOKS}), read from `/proc`; false where there is none. */
function isSessionWatcher(pid: number): boolean {
  if (pid <= 1 || process.platform !== "linux") return false;
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.includes("--session") || (args.includes("hook") && WATCHING_HOOKS.some((hook) => args.includes(hook)));
  } catch {
    return false;
  }
}
