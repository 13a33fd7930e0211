/**
 * Figure 12: delivery and wake through the load balancer, beside the same figures
 * measured locally in the same run.
 *
 * The cluster of deploy/cluster.ts (`npm run cluster`: one redis-server, two
 * `backchannel serve --http` replicas, nginx round-robin in front) is started; the app
 * and the agent are SDK clients over Streamable HTTP through nginx, and the watcher is
 * the remote one (`backchannel watch --url`), as for an agent on another machine. The
 * local figures are backchannel over stdio on the same redis-server (another
 * database), with the local watcher: what differs is the HTTP hop through nginx to a
 * replica, and the remote watcher's MCP calls in place of reading the store.
 *
 * The suites are the ones of the main table (./wake.ts, ./delivery.ts), run for these
 * two designs; every message is still checked to arrive exactly once.
 */
import { startCluster } from "../../deploy/cluster.js";
import { clusterDesign, redisDesign } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import type { Plan } from "../plan.js";
import type { SoloFigure } from "../solo.js";
import { deliveryFigures } from "./delivery.js";
import { wakeFigures } from "./wake.js";

/** The figures of the main table repeated through the balancer. */
const KEYS = ["wake.exit", "wake.exit.teardown", "wake.follow", "watcher.coldStart", "delivery", "delivery.fromCall", "roundTrip"];

/** What the local figures are. */
const LOCAL = "local: stdio servers and watcher on the same redis-server";

/** Measures wake and delivery through the cluster and locally, with `plan`'s sample counts. */
export async function clusterFigures(plan: Plan, ctx: RunContext): Promise<SoloFigure[]> {
  ctx.log("cluster: starting redis-server, 2 replicas and nginx");
  const cluster = await startCluster({ appendfsync: "always" });
  try {
    const base = cluster.redisUrl.replace(/\/0$/, "");
    // Database 0 is the replicas'; the local design takes the others, one per data directory.
    const local = redisDesign((db) => `${base}/${db + 1}`, 15, { pid: cluster.redis[0]!.child.pid });
    const remote = clusterDesign(cluster.mcpUrl, cluster.redisUrl);
    const figures: Figure[] = [
      ...(await wakeFigures([local, remote], plan.wake, ctx)),
      ...(await deliveryFigures([local, remote], plan.delivery, ctx)),
    ];
    return figures
      .filter((figure) => KEYS.includes(figure.key))
      .map((figure) => ({
        key: `cluster.${figure.key}`,
        name: `through nginx, 2 replicas: ${figure.name}`,
        unit: figure.unit,
        solo: true,
        samples: figure.samples.cluster ?? [],
        against: { name: LOCAL, samples: figure.samples.redis ?? [] },
      }));
  } finally {
    await cluster.stop();
  }
}
