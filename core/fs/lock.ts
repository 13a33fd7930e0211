/**
 * Inter-process locks on the files of the layout. The lock of `<file>` is the file
 * `<file>.lock` (core/paths.ts), which holds its holder's record: pid, machine (boot id
 * and pid namespace), the process's start time, a nonce of its own, and a `beat` counter.
 * It is taken by writing the record to a temporary file and hard-linking that to the
 * lock path, which fails when anything is there (atomic on every local file system and
 * on NFS, the classic NFS lock); it is released by unlinking it. So a lock exists
 * exactly while its record does: no lock is ever seen without its holder, even when its
 * holder is killed while taking or releasing it.
 *
 * Whether a holder is alive never rests on comparing one process's clock with another's
 * file times (clocks differ between containers and hosts sharing a folder):
 * - a holder on this machine (same boot, same pid namespace) is alive while its pid runs
 *   with the start time it recorded (a zombie counts as gone). Its lock is never broken,
 *   however long it is held; once it is gone its lock is broken at once;
 * - a holder in another pid namespace or on another host is alive while its lock
 *   changes: it rewrites the record with a growing `beat` every `staleMs / 4` while its
 *   action awaits (a synchronous action holds the event loop, so no beat could run: the
 *   timer is made only for an action that returns a promise), and a waiter breaks the
 *   lock only after seeing it unchanged for `staleMs` by its own monotonic clock;
 * - a lock is broken only under a second lock, `<file>.lock.break` (judged the same
 *   way), after checking that it is still the very lock judged dead (same inode, same
 *   record): when several waiters find the same dead lock, one breaks it, and none can
 *   remove the fresh lock a winner made meanwhile;
 * - what is at the lock path and is not a record (a folder, a link, a pipe, a file
 *   that is not a record) is not a lock: it is moved aside at once
 *   (`<file>.lock.foreign-<time>`), never deleted;
 * - a waiter retries after a short back-off (1 ms, doubling up to 10 ms, with full
 *   jitter) and gives up after three stale periods, with an error naming the holder.
 *   Waking waiters on file-system events was tried and measured worse: every waiter woke
 *   on every creation and removal of the lock, and on two cores the herd took the CPU
 *   from the holder.
 *
 * proper-lockfile (the kind of lock the bench's baseline takes) judges staleness by a
 * lock folder's mtime against the waiter's clock: a writer whose clock runs 6 s ahead
 * breaks live locks, and a lock folder dated a year ahead is never broken.
 *
 * Each attempt is synchronous (link, and an lstat when the lock is taken): a few
 * microseconds, against a few hundred for the same calls through libuv's thread pool,
 * and lock hand-over time bounds how many writes per second several processes get.
 */
import { randomBytes } from "node:crypto";
import { closeSync, linkSync, openSync, renameSync, type Stats, unlinkSync } from "node:fs";
import { FILE_MODE, lockPathOf } from "../paths.js";
import { machineIdentity, procStat } from "../process-info.js";
import { moveAside } from "./aside.js";
import { describeKind, lstatOrNull, readTextFile } from "./safe-open.js";
import { FileTooLargeError, LockLostError, LockTimeoutError, NotRegularFileError } from "./errors.js";
import { writeAll } from "./write-all.js";

/** Options of {@link withLock}. */
export interface LockOptions {
  /**
   * How long a waiter must see a lock unchanged before breaking it, when its holder
   * cannot be checked directly (it runs elsewhere, or left no record). Holders beat four
   * times as often. Waiters give up after three such periods.
   */
  staleMs: number;
  /** Makes the folder the lock lives in again, when it vanished meanwhile (a channel removed by the idle sweep). */
  remakeFolder?: () => void;
  /** Where a broken lock, or something moved aside from a lock path, is reported. Default: nowhere. */
  warn?: (message: string) => void;
}

/** Handed to the action run under a lock. */
export interface HeldLock {
  /**
   * Throws when this process lost the lock (only possible after it stalled for longer
   * than the stale time while a process that cannot check it directly waited). Call it
   * right before committing a write.
   */
  assertHeld(): void;
}

/** What is at a lock path, and what it says about its holder. */
export type LockVerdict =
  /** Nothing: the lock is free. */
  | { state: "gone" }
  /** Something that is not a lock (a folder, a link, a pipe, a file that is not a record). */
  | { state: "foreign"; stats: Stats }
  /**
   * A lock: `alive`, a process of this machine that runs; `dead`, one that is gone;
   * `unknown`, one that cannot be checked directly (judged by whether it changes).
   */
  | { state: "alive" | "dead" | "unknown"; stats: Stats; holder: HolderRecord; text: string };

/** A lock's record. */
export interface HolderRecord {
  pid: number;
  /** Boot id and pid namespace of the holder's machine; `null` where they cannot be read (not Linux). */
  machine: string | null;
  /** The holder's start time (clock ticks since boot, from /proc), against pid reuse; `null` where unknown. */
  started: string | null;
  nonce: string;
  beat: number;
}

/** A record is one short line; anything longer was not written by a lock. */
const RECORD_MAX_BYTES = 1024;
/** A lock seen unchanged this long is looked into (its record read); locks are normally held for microseconds. */
const EXAMINE_AFTER_MS = 100;
/** Longest wait between two attempts. */
const MAX_RETRY_MS = 10;
/**
 * Within this fraction of the stale time after taking a lock, no other process can have
 * broken it (a waiter that cannot check the holder must see the new lock unchanged for a
 * whole stale time first), so the holder need not look.
 */
const SURELY_HELD_FRACTION = 0.9;
/** Why a holder no longer holds its lock. */
const BROKEN_WHILE_STALLED = "another process broke it while this one stalled";
/** Random per process: with a count, it makes each acquisition's nonce, unique across processes and hosts. */
const processToken = randomBytes(8).toString("hex");
let acquisitions = 0;

/** A new record of this process, with a nonce no other acquisition of any process has (cheaper than random bytes: a queue's lock is taken per append). */
function newRecord(): HolderRecord {
  acquisitions += 1;
  return { pid: process.pid, ...thisProcess(), nonce: `${processToken}${acquisitions.toString(16)}`, beat: 0 };
}

/**
 * Runs `action` while holding the lock of `path` (the file need not exist; its folder
 * must have been reached through ./safe-open.ts).
 * @throws LockTimeoutError when the lock stays held for three stale periods;
 *   UnsafeLayoutError when a lock belongs to another user; whatever `action` throws,
 *   after releasing the lock.
 */
export async function withLock<T>(path: string, options: LockOptions, action: (lock: HeldLock) => Promise<T> | T): Promise<T> {
  const holding = await acquire(path, options);
  try {
    const result = action(holding);
    // No beat can run while a synchronous action holds the event loop: only one that awaits needs the timer.
    if (!(result instanceof Promise)) return result;
    holding.beatWhileHeld();
    return await result;
  } finally {
    holding.release();
  }
}

async function acquire(path: string, options: LockOptions): Promise<Holding> {
  const lockPath = lockPathOf(path);
  const started = performance.now();
  const lock = new Observation();
  const guard = new Observation();
  const record = newRecord();
  let verdict: LockVerdict | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      // The temporary record file is removed once the lock is released, outside the held time.
      if (tryTake(lockPath, record, options.remakeFolder)) return new Holding(path, lockPath, record, options.staleMs);
      const stats = lstatOrNull(lockPath);
      if (!stats) continue; // released meanwhile: try again at once
      const now = performance.now();
      verdict = lock.due(stats, now) ? judgeLock(lockPath) : undefined;
      if (verdict) {
        lock.examined(verdict, now);
        if (shouldClear(verdict, lock, now, options) && underGuard(lockPath, options, guard, () => clear(lockPath, verdict!, options))) continue;
      }
      const waited = now - started;
      if (waited > 3 * options.staleMs) throw new LockTimeoutError(path, Math.round(waited), describeHolder(verdict ?? judgeLock(lockPath)));
      const ceiling = Math.min(MAX_RETRY_MS, 2 ** Math.min(attempt, 4));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
    }
  } catch (error) {
    removeQuietly(() => unlinkSync(tempOf(lockPath, record)));
    throw error;
  }
}

/** The temporary file a lock's record is written to before it is linked to the lock path (the idle sweep removes old ones). */
function tempOf(lockPath: string, record: HolderRecord): string {
  return `${lockPath}.${record.nonce}-${record.beat}.tmp`;
}

/**
 * Links a record to the lock path (writing it first when needed; `remakeFolder` makes the
 * folder again when it vanished). @returns true when this process now holds the lock,
 * false when something is there.
 */
function tryTake(lockPath: string, record: HolderRecord, remakeFolder?: () => void): boolean {
  const temp = tempOf(lockPath, record);
  try {
    linkSync(temp, lockPath);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "ENOENT") throw error;
  }
  // No record to link yet (first attempt), or the folder vanished with it (the channel was removed).
  try {
    writeNewFile(temp, JSON.stringify(record));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !remakeFolder) throw error;
    remakeFolder();
    writeNewFile(temp, JSON.stringify(record));
  }
  return tryTake(lockPath, record);
}

/** True when what is at the lock path should go: not a lock, or a lock whose holder is gone or has not changed for a stale time. */
function shouldClear(verdict: LockVerdict, observation: Observation, now: number, options: LockOptions): boolean {
  if (verdict.state === "foreign" || verdict.state === "dead") return true;
  return verdict.state === "unknown" && observation.unchangedFor(now) >= options.staleMs;
}

/** A lock this process holds: it beats while held, and is unlinked when released. */
class Holding implements HeldLock {
  private lost: string | undefined;
  private readonly since = performance.now();
  private timer: NodeJS.Timeout | undefined;
  /** The temporary file the record was linked from, removed on release. */
  private readonly temp: string;

  constructor(
    private readonly path: string,
    private readonly lockPath: string,
    private readonly record: HolderRecord,
    private readonly staleMs: number,
  ) {
    this.temp = tempOf(lockPath, record);
  }

  /** Starts the beats (until released): for an action that awaits, so that waiters elsewhere see the lock change. */
  beatWhileHeld(): void {
    this.timer = setInterval(() => this.beat(), Math.max(250, Math.floor(this.staleMs / 4)));
    this.timer.unref();
  }

  assertHeld(): void {
    if (!this.lost && !this.surelyHeld() && !this.stillOurs()) this.lost = BROKEN_WHILE_STALLED;
    if (this.lost) throw new LockLostError(this.path, this.lost);
  }

  release(): void {
    clearInterval(this.timer);
    // Not ours any more: leave it to its holder.
    try {
      if (!this.lost && (this.surelyHeld() || this.stillOurs())) removeQuietly(() => unlinkSync(this.lockPath));
    } finally {
      removeQuietly(() => unlinkSync(this.temp));
    }
  }

  /** Rewrites the record with the next beat, so that waiters that cannot check this process see the lock change. */
  private beat(): void {
    try {
      if (!this.stillOurs()) {
        this.lost = BROKEN_WHILE_STALLED;
        clearInterval(this.timer);
        return;
      }
      this.record.beat += 1;
      const temp = tempOf(this.lockPath, this.record);
      writeNewFile(temp, JSON.stringify(this.record));
      renameSync(temp, this.lockPath);
    } catch {
      // A full disk, say: the beat is skipped, and the next one tries again. Waiters on
      // this machine check the pid and never need beats.
    }
  }

  private surelyHeld(): boolean {
    return performance.now() - this.since < SURELY_HELD_FRACTION * this.staleMs;
  }

  private stillOurs(): boolean {
    const verdict = judgeLock(this.lockPath, false);
    return verdict.state !== "gone" && verdict.state !== "foreign" && verdict.holder.nonce === this.record.nonce;
  }
}

/**
 * How long this process has seen what is at one lock path unchanged (same inode, times
 * and record), by its own monotonic clock.
 */
class Observation {
  private key = "";
  private text: string | null | undefined;
  private since = 0;
  private lastExamined = Number.NEGATIVE_INFINITY;

  /**
   * Notes what is at a lock path (its `stats`) as seen now; a change starts the count again.
   * @returns true when it has been seen unchanged long enough to look into, and was not looked into just now.
   */
  due(stats: Stats, now: number): boolean {
    const key = `${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}`;
    if (key !== this.key) {
      this.key = key;
      this.text = undefined;
      this.since = now;
      this.lastExamined = Number.NEGATIVE_INFINITY;
    }
    return now - this.since >= EXAMINE_AFTER_MS && now - this.lastExamined >= EXAMINE_AFTER_MS;
  }

  /** Notes what the record said; a changed record (a beat) starts the count again. */
  examined(verdict: LockVerdict, now: number): void {
    const text = "text" in verdict ? verdict.text : null;
    if (this.text !== undefined && text !== this.text) this.since = now;
    this.text = text;
    this.lastExamined = now;
  }

  unchangedFor(now: number): number {
    return now - this.since;
  }
}

/**
 * Runs `action` under the guard `<lockPath>.break`, which makes clearing a lock path
 * one process's job at a time. A guard whose holder is gone is cleared (and the attempt
 * given up this time).
 * @returns true when `action` ran (look at the lock again at once), false when the guard is busy (wait).
 */
function underGuard(lockPath: string, options: LockOptions, observation: Observation, action: () => void): boolean {
  const guardPath = `${lockPath}.break`;
  const record = newRecord();
  let taken: boolean;
  try {
    taken = tryTake(guardPath, record);
  } catch (error) {
    // The folder vanished (the channel was removed): the next attempt at the lock makes it again.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  } finally {
    removeQuietly(() => unlinkSync(tempOf(guardPath, record)));
  }
  if (!taken) {
    const now = performance.now();
    const stats = lstatOrNull(guardPath);
    if (stats && observation.due(stats, now)) {
      const verdict = judgeLock(guardPath);
      observation.examined(verdict, now);
      if (shouldClear(verdict, observation, now, options)) clear(guardPath, verdict, options);
    }
    return false;
  }
  try {
    action();
    return true;
  } finally {
    removeQuietly(() => unlinkSync(guardPath));
  }
}

/**
 * Clears what was judged to go from a lock path, unless it changed since (then the next
 * attempt looks again): a dead lock's record is deleted; anything else is moved aside (`.foreign-<time>`) and reported, so that nothing a person
 * may want back is lost. Call only under the guard (or for the guard itself).
 */
function clear(lockPath: string, verdict: LockVerdict, options: LockOptions): void {
  if (verdict.state === "gone") return;
  const now = judgeLock(lockPath, false);
  if (now.state === "gone" || now.stats.ino !== verdict.stats.ino || ("text" in now ? now.text : null) !== ("text" in verdict ? verdict.text : null))
    return;
  const warn = options.warn ?? (() => undefined);
  if (verdict.state !== "foreign") {
    removeQuietly(() => unlinkSync(lockPath));
    warn(`broke the lock ${lockPath}, left by ${describeHolder(verdict)}`);
    return;
  }
  const aside = moveAside(lockPath, "foreign");
  warn(`${lockPath} was ${describeKind(verdict.stats)}, not a lock: moved it aside to ${aside}`);
}

/**
 * What the lock at `lockPath` says right now, without waiting (also the idle sweep's
 * question: is anyone using this channel?).
 * @param checkHolder false to skip the liveness check (when only the record matters).
 * @throws UnsafeLayoutError when it belongs to another user.
 */
export function judgeLock(lockPath: string, checkHolder = true): LockVerdict {
  const stats = lstatOrNull(lockPath);
  if (!stats) return { state: "gone" };
  if (!stats.isFile()) return { state: "foreign", stats };
  let text: string | null;
  try {
    text = readTextFile(lockPath, RECORD_MAX_BYTES);
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError) return { state: "foreign", stats };
    throw error;
  }
  if (text === null) return { state: "gone" };
  const holder = parseHolder(text);
  if (!holder) return { state: "foreign", stats };
  const here = thisProcess().machine;
  if (holder.machine === null || holder.machine !== here || !checkHolder) return { state: "unknown", stats, holder, text };
  return { state: isRunning(holder) ? "alive" : "dead", stats, holder, text };
}

function parseHolder(text: string): HolderRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const record = value as Partial<HolderRecord> | null;
  if (typeof record !== "object" || record === null) return null;
  const { pid, machine, started, nonce, beat } = record;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0 || typeof nonce !== "string" || !Number.isSafeInteger(beat)) return null;
  if ((machine !== null && typeof machine !== "string") || (started !== null && typeof started !== "string")) return null;
  return { pid: pid as number, machine, started, nonce, beat: beat as number };
}

/** True while the holder's process runs: its pid exists, is not a zombie, and started when the record says. */
function isRunning(holder: HolderRecord): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const stat = procStat(holder.pid);
  if (!stat) return true; // it ran a moment ago; the next look decides
  if (stat.state === "Z" || stat.state === "X") return false;
  return holder.started === null || stat.started === holder.started;
}

/** In words, for messages: who holds (or held) a lock. */
function describeHolder(verdict: LockVerdict): string {
  if (verdict.state === "gone") return "another process";
  if (verdict.state === "foreign") return `${describeKind(verdict.stats)} in place of a lock`;
  const pid = verdict.holder.pid;
  if (verdict.state === "alive") return `process ${pid} on this machine, which is still running (if it is stuck, end it: kill ${pid})`;
  if (verdict.state === "dead") return `process ${pid}, which is gone`;
  return `process ${pid} of another machine or container`;
}

let identity: { machine: string | null; started: string | null } | undefined;

/** This process's machine (boot id and pid namespace, ../process-info.ts) and start time, read once. */
function thisProcess(): { machine: string | null; started: string | null } {
  if (!identity) {
    // Off Linux there is neither: holders are judged by their beats only.
    const machine = machineIdentity();
    identity = { machine, started: machine === null ? null : (procStat(process.pid)?.started ?? null) };
  }
  return identity;
}

/** Writes a new file (never one that exists, never through a link), mode 0600. */
function writeNewFile(path: string, text: string): void {
  const fd = openSync(path, "wx", FILE_MODE);
  try {
    writeAll(fd, text, path);
  } catch (error) {
    closeSync(fd);
    removeQuietly(() => unlinkSync(path));
    throw error;
  }
  closeSync(fd);
}

function removeQuietly(remove: () => void): void {
  try {
    remove();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
