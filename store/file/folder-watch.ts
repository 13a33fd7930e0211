/**
 * Wake-ups for long-polls: "a file in this folder was replaced". One `fs.watch` per
 * folder per process, shared by every waiter on that folder. A queue file is replaced
 * by rename, so the folder is watched rather than the file (whose inode changes).
 *
 * File-system events are a hint, not a promise (some file systems send none, and
 * events can be coalesced), so every waiter also wakes on a slow timer and re-reads.
 * Waiters must subscribe before they read, so that a change between the read and the
 * wait is not missed: a subscription remembers a change until it is waited for.
 */
import { watch, type FSWatcher } from "node:fs";
import type { ChangeSubscription, WakeReason } from "../store.js";

interface Waiter {
  fileName: string;
  changed: boolean;
  wake: (() => void) | undefined;
}

interface FolderEntry {
  watcher: FSWatcher | undefined;
  waiters: Set<Waiter>;
}

/**
 * How often a waiter on the file store reads again without an event, by default: a
 * file-system event can be missed (a full inotify queue, a network file system).
 */
export const FILE_FALLBACK_WAKE_MS = 5000;

const folders = new Map<string, FolderEntry>();

/**
 * Subscribes to changes of `fileName` in `dir`; the folder's watch is closed with its
 * last subscriber. When the folder cannot be watched (missing, or a file system without
 * events) the subscription still works, on its timer alone.
 */
export function subscribeToFile(dir: string, fileName: string): ChangeSubscription {
  const entry = folders.get(dir) ?? openFolder(dir);
  const waiter: Waiter = { fileName, changed: false, wake: undefined };
  entry.waiters.add(waiter);
  let closed = false;
  return {
    next(maxMs, signal) {
      if (waiter.changed) {
        waiter.changed = false;
        return Promise.resolve("changed");
      }
      if (signal?.aborted) return Promise.resolve("aborted");
      return new Promise<WakeReason>((resolve) => {
        const finish = (reason: WakeReason) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          waiter.wake = undefined;
          waiter.changed = false;
          resolve(reason);
        };
        const onAbort = () => finish("aborted");
        const timer = setTimeout(() => finish("timeout"), Math.max(0, maxMs));
        signal?.addEventListener("abort", onAbort, { once: true });
        waiter.wake = () => finish("changed");
      });
    },
    close() {
      if (closed) return;
      closed = true;
      waiter.wake?.();
      entry.waiters.delete(waiter);
      if (entry.waiters.size === 0) {
        entry.watcher?.close();
        folders.delete(dir);
      }
    },
  };
}

function openFolder(dir: string): FolderEntry {
  const entry: FolderEntry = { watcher: undefined, waiters: new Set() };
  try {
    // persistent: false, so that a pending long-poll never keeps a process alive.
    entry.watcher = watch(dir, { persistent: false }, (_type, name) => {
      for (const waiter of entry.waiters) {
        if (name !== null && name !== waiter.fileName) continue;
        waiter.changed = true;
        waiter.wake?.();
      }
    });
    entry.watcher.on("error", () => {
      entry.watcher?.close();
      entry.watcher = undefined;
    });
  } catch {
    entry.watcher = undefined;
  }
  folders.set(dir, entry);
  return entry;
}
