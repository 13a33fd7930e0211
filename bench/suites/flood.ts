/**
 * Figure 17: one principal flooding `serve --http --auth tokens` with polls it never
 * reads, for backchannel alone (the baseline serves no HTTP). The flooder fills a queue
 * to its 8 MiB with messages of quotes (a poll's answer is then about 3 MiB: its text
 * repeats each message, escaped again), then asks for all of it again and again:
 * - in JSON-RPC batches of 100 polls, one socket each;
 * - in separate requests, one socket each.
 * Beside each flood another principal calls `notify_ui` on a connection of its own, one
 * call after another; its floor is the same call measured before the flood, in the same
 * run. The server's resident memory is sampled between those calls, against its memory
 * before the flood.
 */
import type { RunContext } from "../figures.js";
import type { SoloFigure } from "../solo.js";
import { fillWithQuotes, pollAll, postRead, postUnread, toolCall, type Unread } from "../../test/support/flood.js";
import { rssMiB, serveWithTokens, stopHttpServers } from "../../test/support/http-serve.js";

/** How the flood suite is sized. */
export interface FloodPlan {
  /** The other principal's calls measured quiet, and beside each flood. */
  calls: number;
  /** JSON-RPC batches of 100 polls. */
  batches: number;
  /** Separate polls. */
  separate: number;
}

/** Measures the other principal's call and the server's memory, quiet and beside each flood. */
export async function floodFigures(plan: FloodPlan, ctx: RunContext): Promise<SoloFigure[]> {
  const {
    url,
    process: server,
    tokens: { flooder, other },
    cleanup,
  } = await serveWithTokens(["flooder", "other"]);
  const sent: Unread[] = [];
  try {
    ctx.log("flood: filling a queue to 8 MiB");
    await fillWithQuotes(url, flooder, "full");
    const call = async () => {
      const { text, ms } = await postRead(url, other, toolCall(1, "notify_ui", { channel_id: "other", event: "e", data: {} }));
      if (!/"seq":\d+/.test(text)) throw new Error(`the other principal's notify_ui failed: ${text.slice(0, 300)}`);
      return ms;
    };
    /** `plan.calls` of the other principal's calls, and the server's memory after each. */
    const measure = async () => {
      const calls: number[] = [];
      const rss: number[] = [];
      for (let index = 0; index < plan.calls; index++) {
        calls.push(await call());
        rss.push(rssMiB(server.pid!));
      }
      return { calls, rss };
    };
    await measure();
    const quiet = await measure();
    ctx.log(`flood: ${plan.batches} batches of 100 unread polls`);
    let id = 0;
    for (let batch = 0; batch < plan.batches; batch++)
      sent.push(
        postUnread(
          url,
          flooder,
          Array.from({ length: 100 }, () => pollAll(id++, "full")),
        ),
      );
    const batched = await measure();
    ctx.log(`flood: ${plan.separate} separate unread polls`);
    for (let index = 0; index < plan.separate; index++) sent.push(postUnread(url, flooder, pollAll(id++, "full"), "2025-11-25"));
    const separate = await measure();
    const callFloor = { name: "the same call before the flood", samples: quiet.calls };
    const rssFloor = { name: "the server before the flood", samples: quiet.rss };
    const figure = (key: string, name: string, unit: string, samples: number[], against: SoloFigure["against"]): SoloFigure => ({
      key,
      name,
      unit,
      solo: true,
      samples,
      against,
    });
    return [
      figure(
        "flood.batches.otherCall",
        `flood: another principal's notify_ui beside ${plan.batches} batches of 100 unread polls`,
        "ms",
        batched.calls,
        callFloor,
      ),
      figure("flood.batches.rss", `flood: server RSS beside ${plan.batches} batches of 100 unread polls`, "MiB", batched.rss, rssFloor),
      figure(
        "flood.separate.otherCall",
        `flood: another principal's notify_ui beside ${plan.separate} separate unread polls`,
        "ms",
        separate.calls,
        callFloor,
      ),
      figure("flood.separate.rss", `flood: server RSS beside ${plan.separate} separate unread polls`, "MiB", separate.rss, rssFloor),
    ];
  } finally {
    for (const one of sent) one.end();
    stopHttpServers();
    await cleanup();
  }
}
