/**
 * The baseline watcher: reads a channel's agent queue every 500 ms, with the same
 * command line and output contract as `backchannel watch` (exit 0 and one line when a
 * message waits; `--follow` prints a line per new seq; "waiting for messages" on
 * stderr once armed; exit 2 at the timeout).
 *
 *     node dist/bench/baseline/watcher.js <channel_id> [--follow] [--timeout S]
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { queueFile, resolveDataDir } from "../../core/paths.js";
import type { QueueMessage } from "../../protocol/message.js";
import { parseLog } from "../../store/file/log-format.js";

/** How often the baseline watcher reads the queue file. */
const BASELINE_WATCH_INTERVAL_MS = 500;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { follow: { type: "boolean" }, timeout: { type: "string" } },
  });
  const channelId = positionals[0] ?? "";
  const path = queueFile(resolveDataDir(), channelId, "agent");
  const deadline = Date.now() + Number(values.timeout ?? 1800) * 1000;
  let lastSeq = 0;
  let armed = false;
  while (Date.now() < deadline) {
    const fresh = (await readMessages(path)).filter((message) => message.seq > lastSeq);
    if (fresh.length > 0 && !values.follow) {
      process.stdout.write(`${fresh.length} message(s) waiting on ${channelId}\n`);
      return 0;
    }
    for (const message of fresh) process.stdout.write(`${channelId} #${message.seq} ${message.event}\n`);
    lastSeq = fresh.at(-1)?.seq ?? lastSeq;
    if (!armed) process.stderr.write(`waiting for messages on ${channelId}\n`);
    armed = true;
    await sleep(BASELINE_WATCH_INTERVAL_MS);
  }
  return 2;
}

/**
 * The messages in a queue file. The file is rewritten in place, so a read can catch it
 * half written: that read counts as empty and the next tick reads again.
 */
async function readMessages(path: string): Promise<QueueMessage[]> {
  try {
    return parseLog(await readFile(path, "utf8"), path).queue.messages;
  } catch {
    return [];
  }
}

main().then((code) => {
  process.exitCode = code;
});
