/**
 * Removal of idle channels for a long-running server: once soon after start (without
 * delaying the first answers: a sweep over 10,000 channels takes seconds) and then
 * hourly. Failures are reported on stderr and never stop the server. Every principal's
 * channels are swept too (docs/ARCHITECTURE.md, "Remote serving").
 */
import type { ChannelStore } from "../store/store.js";

/** How often a running server removes idle channels. */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** Starts sweeping `store` in the background; the timers never keep the process alive. */
export function startIdleSweep(store: ChannelStore): void {
  const sweep = () => {
    sweepAll(store).catch((error: Error) => process.stderr.write(`backchannel: idle sweep failed: ${error.message}\n`));
  };
  setTimeout(sweep, 1000).unref();
  setInterval(sweep, SWEEP_INTERVAL_MS).unref();
}

/** Sweeps the store's own channels, then each principal's. */
async function sweepAll(store: ChannelStore): Promise<void> {
  await store.removeIdleChannels();
  for (const namespace of await store.listPrincipals()) await store.forPrincipal(namespace).removeIdleChannels();
}
