/** Finding a TCP port to listen on, for programs that must be given one (redis-server, nginx, Inspector). */
import { createServer } from "node:net";

/**
 * A TCP port that nobody listens on at `host` right now: the system picks it, the probe
 * lets it go. Another process may take it before the caller does; callers that start a
 * server on it see that as a failure to listen.
 * @param host default 127.0.0.1.
 * @throws the listen error (e.g. EADDRNOTAVAIL for an address this machine does not have).
 */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error(`no port on ${host}`))));
    });
  });
}
