// freePort: a port a server can bind, picked where outgoing connections do not take their local ports.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../src/ports.ts';

const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);

describe('freePort', () => {
  it('gives ports below the ephemeral range that a server then binds', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralLow as number);
    }
    for (const port of ports.slice(0, 5)) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never gives a port a server is listening on', async () => {
    // Hold many ports of the range: freePort must step around every one of them.
    const held = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const server = createServer();
        const port = await freePort();
        await new Promise<void>((resolve) => {
          server.once('error', () => resolve());
          server.listen(port, '127.0.0.1', resolve);
        });
        return { server, port };
      }),
    );
    const taken = new Set(held.filter((h) => h.server.listening).map((h) => h.port));
    for (let i = 0; i < 50; i++) expect(taken.has(await freePort())).toBe(false);
    for (const h of held) h.server.close();
  });
});
