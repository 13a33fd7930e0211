/**
 * One process of the throughput suite. It runs tasks sent on stdin, one JSON line
 * each, against a design's store, and answers each with a report line on stdout:
 *
 *     {"task": WorkerTask}   open the store and read once, then print "armed"
 *     {"go": true}           start the armed task: append or drain as fast as it can
 *                            (or, for the floor, append and fdatasync lines to a bare file,
 *                            with or without the queue's lock around each write)
 *     {"stop": true}         a drainer finishes its task once the queue is empty
 *
 * It prints "ready" once loaded, so that process start-up is never measured, and is
 * reused for every run of a suite, so that start-up is paid once. Arming and starting
 * are two steps so that all workers of a run start together (../procs/worker.ts): a
 * worker that opened its store late would otherwise stretch the run's span.
 *
 *     node dist/bench/workers/queue-worker.js
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { openStore, type StoreLocation } from "../../store/open.js";
import { RedisStore } from "../../store/redis/redis-store.js";
import type { ReplicaSetting } from "../../store/redis/replicated.js";
import type { ChannelStore } from "../../store/store.js";
import type { QueueMessage } from "../../protocol/message.js";
import { PollingStore } from "../baseline/polling-store.js";
import type { DesignName } from "../designs.js";
import { DEFAULT_LIMITS, type Limits } from "../../core/limits.js";
import { withLock } from "../../core/fs/lock.js";

/** What a worker is asked to do. */
export interface WorkerTask {
  design: DesignName;
  /** Where the design's channels live (the baseline's: a data directory). */
  location: StoreLocation;
  channelId: string;
  /**
   * `floor`: a bare O_APPEND write + fdatasync loop on `floor.log` in the data directory,
   * no store (the physical floor of an append); `locked-floor`: the same loop with each
   * write under the lock a queue's appends take (core/fs/lock.ts) and the
   * fdatasync after its release, as an append does: the floor of any design that serializes appends with it.
   */
  role: "append" | "drain" | "floor" | "locked-floor";
  /** The appender's number, part of each message's key "<writer>:<index>". */
  writer: number;
  /** How many messages an appender appends at most. */
  count: number;
  /** How long an appender appends at most. */
  durationMs: number;
  /** Limits that differ from the defaults (a queue longer than 1,000 messages). */
  limits?: Partial<Limits>;
  /** On the Redis store: its replica setting (../designs.ts `redisReplicas`). Default: the store's. */
  replicas?: ReplicaSetting;
}

/** What a worker reports. Times are milliseconds since the epoch, with sub-ms precision. */
export interface WorkerReport {
  startedAt: number;
  /** When the last append returned, or when the last drain that found messages returned. */
  lastAt: number;
  /** Appends that returned a seq, or drains that returned at least one message. */
  operations: number;
  /** Keys of the messages appended (appender) or received (drainer). */
  keys: string[];
  /** Messages of failed appends or drains, e.g. a lock that stayed busy too long. */
  errors: string[];
}

/** A line on the worker's stdin. */
export type WorkerCommand = { task: WorkerTask } | { go: true } | { stop: true };

/**
 * How long a drainer's read waits for a message when the queue is empty, as an app's
 * long-poll does (a design that cannot wait, the baseline, returns at once).
 */
const DRAIN_WAIT_MS = 1000;
/** How long a drainer whose read failed, or returned empty without waiting, pauses before it reads again. */
const EMPTY_PAUSE_MS = 1;
/** A drainer gives up after this long, whatever happens. */
const MAX_DRAIN_MS = 5 * 60 * 1000;

const now = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  let stop = new AbortController();
  let armed: { store: ChannelStore | undefined; task: WorkerTask } | undefined;
  const running: Promise<void>[] = [];
  process.stdout.write("ready\n");
  for await (const line of createInterface({ input: process.stdin })) {
    const command = JSON.parse(line) as WorkerCommand;
    if ("stop" in command) {
      stop.abort();
    } else if ("task" in command) {
      const { task } = command;
      const store = task.role === "floor" || task.role === "locked-floor" ? undefined : await storeFor(task);
      if (store) await warmUp(store, task.channelId);
      armed = { store, task };
      process.stdout.write("armed\n");
    } else if (armed) {
      stop = new AbortController();
      const { store, task } = armed;
      armed = undefined;
      // Not awaited here: a drainer must keep reading stdin to hear "stop".
      const work = !store ? appendToFloor(task) : task.role === "append" ? append(store, task) : drain(store, task, stop.signal);
      running.push(work.then((report) => void process.stdout.write(`${JSON.stringify(report)}\n`)));
    }
  }
  await Promise.all(running);
  // Redis connections would keep the process alive.
  await Promise.all([...stores.values()].map(async (opened) => (await opened).close()));
}

/**
 * A first read before the clock starts, so that opening a connection (Redis) is not
 * timed; tried again while the connection is still being made (16 workers starting at
 * once on two busy cores can take longer than a first call waits).
 * @throws the read's error after 60 s.
 */
async function warmUp(store: ChannelStore, channelId: string): Promise<void> {
  const deadline = now() + 60_000;
  for (;;) {
    try {
      await store.peek(channelId, "agent");
      return;
    } catch (error) {
      if (now() > deadline) throw error;
      await sleep(100);
    }
  }
}

/** The stores this worker opened, one per design and location, kept for every later task (as a server keeps its store). */
const stores = new Map<string, Promise<{ store: ChannelStore; close(): Promise<void> }>>();

async function storeFor(task: WorkerTask): Promise<ChannelStore> {
  const key = JSON.stringify([task.design, task.location, task.limits, task.replicas]);
  let opened = stores.get(key);
  if (!opened) {
    const { location } = task;
    opened =
      task.design === "baseline" && location.kind === "file"
        ? Promise.resolve({ store: new PollingStore(location.dataDir), close: async () => undefined })
        : location.kind === "redis" && task.replicas !== undefined
          ? Promise.resolve(openRedisStore(location.url, task.limits, task.replicas))
          : openStore(location, { warn: () => undefined, limits: task.limits });
    stores.set(key, opened);
  }
  return (await opened).store;
}

/** The Redis store at `url` with the replica setting `replicas`. */
function openRedisStore(url: string, limits: Partial<Limits> | undefined, replicas: ReplicaSetting): { store: ChannelStore; close(): Promise<void> } {
  const store = new RedisStore({ url, limits, replicas, warn: () => undefined });
  return { store, close: () => store.close() };
}

async function append(store: ChannelStore, task: WorkerTask): Promise<WorkerReport> {
  const report: WorkerReport = { startedAt: now(), lastAt: now(), operations: 0, keys: [], errors: [] };
  const deadline = report.startedAt + task.durationMs;
  for (let index = 0; index < task.count && now() < deadline; index += 1) {
    const key = `${task.writer}:${index}`;
    try {
      await store.append(task.channelId, "agent", "ask", { key });
      report.operations += 1;
      report.keys.push(key);
    } catch (error) {
      report.errors.push((error as Error).message);
    }
    report.lastAt = now();
  }
  return report;
}

/**
 * The physical floor of a durable append: lines as long as a store's record, appended to
 * one file with O_APPEND and made durable with fdatasync one by one, with no check and
 * no mark, and no lock unless the role is `locked-floor`. Several workers append to the
 * same file, as appenders to one queue.
 */
async function appendToFloor(task: WorkerTask): Promise<WorkerReport> {
  await Promise.resolve(); // a task runs after main() has set it going, as the others do
  if (task.location.kind !== "file") throw new Error("the floor is measured in a data directory");
  const path = join(task.location.dataDir, "floor.log");
  const fd = openSync(path, "a", 0o600);
  const lock = { staleMs: DEFAULT_LIMITS.lockStaleMs };
  const report: WorkerReport = { startedAt: now(), lastAt: now(), operations: 0, keys: [], errors: [] };
  const deadline = report.startedAt + task.durationMs;
  try {
    for (let index = 0; index < task.count && now() < deadline; index += 1) {
      const line = `${JSON.stringify({ seq: index + 1, event: "ask", data: { key: `${task.writer}:${index}` }, ts: new Date().toISOString() })}\n`;
      if (task.role === "locked-floor") await withLock(path, lock, () => writeSync(fd, line));
      else writeSync(fd, line);
      fdatasyncSync(fd);
      report.operations += 1;
      report.lastAt = now();
    }
  } finally {
    closeSync(fd);
  }
  return report;
}

/** Empties the queue with read-and-clear polls that wait for messages, until `stopped` and the queue is empty. */
async function drain(store: ChannelStore, task: WorkerTask, stopped: AbortSignal): Promise<WorkerReport> {
  const report: WorkerReport = { startedAt: now(), lastAt: now(), operations: 0, keys: [], errors: [] };
  const deadline = report.startedAt + MAX_DRAIN_MS;
  while (now() < deadline) {
    // Read the flag before polling: a stop that came earlier means nothing more will be
    // appended, so an empty read then ends the drain. Stopping also ends a waiting read.
    const last = stopped.aborted;
    const asked = now();
    let messages: QueueMessage[];
    try {
      ({ messages } = await store.poll(task.channelId, "agent", last ? {} : { waitMs: DRAIN_WAIT_MS, signal: stopped }));
    } catch (error) {
      // A drain that failed took nothing (the lock stayed busy): note it and read again.
      report.errors.push((error as Error).message);
      await sleep(EMPTY_PAUSE_MS);
      continue;
    }
    if (messages.length > 0) {
      report.operations += 1;
      report.lastAt = now();
      for (const message of messages) report.keys.push(String((message.data as { key?: unknown }).key));
    } else if (last) {
      break;
    } else if (now() - asked < DRAIN_WAIT_MS) {
      // It did not wait (the baseline), or was stopped: a pause, so that reading again is not a busy loop.
      await sleep(EMPTY_PAUSE_MS);
    }
  }
  return report;
}

main().catch((error: Error) => {
  process.stderr.write(`queue worker: ${error.stack ?? error.message}\n`);
  // At once: an open Redis connection would keep the worker alive, and the run waiting for it.
  process.exit(1);
});
