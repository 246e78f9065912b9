import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The lowest port of the kernel's ephemeral range: where the OS picks a port for `listen(0)` and the local port of
 * every outgoing connection. A port taken from that range and released can be taken again by any connection, of
 * this process or another, before its server binds it.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low)) return low;
  } catch {
    // not Linux: the IANA range
  }
  return 49152;
}

/** True when a server could bind `port` on 127.0.0.1 a moment ago (0: the OS picks; the port it picked). */
function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** The lowest port `freePort` picks from: above the well-known and most registered service ports. */
const LOWEST = 20_000;

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a server a test starts next. It is picked at random
 * below the ephemeral range, where no outgoing connection takes its local port, so only another `freePort`
 * caller could take it first (1 in ~12,000 here). Without room below the range, the OS picks.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow() - LOWEST;
  if (below >= 1000)
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = LOWEST + Math.floor(Math.random() * below);
      if ((await bindable(port)) === port) return port;
    }
  const picked = await bindable(0);
  if (picked === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return picked;
}
