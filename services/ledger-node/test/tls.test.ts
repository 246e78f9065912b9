// HTTPS between nodes, and mutual TLS: peers present a client certificate from the cluster CA.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@scriptorium/harness/local-cluster';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertSameChain, records, waitForRecords } from './helpers.ts';
import { createTestPki, type TestPki } from './tls-certs.ts';

// Real processes on a shared 2-core machine: generous limits (and never timed assertions).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let dir: string;
let pki: TestPki;
const clusters: LocalCluster[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-tls-'));
  pki = createTestPki(dir);
});
afterAll(async () => {
  for (const c of clusters) await c.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

async function post(url: string, agent: Agent, token: string, body: unknown) {
  const res = await request(url, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

describe('TLS', () => {
  it('server mode: a validator pair agrees over HTTPS', async () => {
    const cluster = await LocalCluster.create({
      size: 2,
      roundTimeoutMs: 400,
      tls: {
        mode: 'server',
        caFile: pki.caFile,
        ca: pki.ca,
        certFor: () => ({ certFile: pki.certFile, keyFile: pki.keyFile }),
      },
    });
    clusters.push(cluster);
    await cluster.startAll();
    expect(cluster.nodes[0]?.url.startsWith('https://')).toBe(true);
    const batch = records('tls-s', 10);
    expect((await cluster.post(cluster.nodes[0] as never, '/mempool', { records: batch })).status).toBe(200);
    await waitForRecords(
      cluster,
      cluster.nodes,
      batch.map((r) => r.id),
    );
    await assertSameChain(cluster, cluster.nodes);
  });

  it('mutual mode: peers with cluster certificates agree; no or rogue client cert → 401 on peer routes, reads stay open', async () => {
    const cluster = await LocalCluster.create({
      size: 4,
      roundTimeoutMs: 400,
      tls: {
        mode: 'mutual',
        caFile: pki.caFile,
        ca: pki.ca,
        certFor: () => ({ certFile: pki.certFile, keyFile: pki.keyFile }),
        client: { cert: pki.cert, key: pki.key },
      },
    });
    clusters.push(cluster);
    await cluster.startAll();
    const n0 = cluster.nodes[0] as never as { url: string };
    const batch = records('tls-m', 10);
    expect((await cluster.post(n0 as never, '/mempool', { records: batch })).status).toBe(200);
    await waitForRecords(
      cluster,
      cluster.nodes,
      batch.map((r) => r.id),
    );
    await assertSameChain(cluster, cluster.nodes);

    const noCert = new Agent({ connect: { ca: pki.ca } });
    const rogue = new Agent({ connect: { ca: pki.ca, cert: pki.rogue.cert, key: pki.rogue.key } });
    try {
      const health = await request(`${n0.url}/health`, { dispatcher: noCert });
      expect(health.statusCode).toBe(200);
      await health.body.dump();
      for (const agent of [noCert, rogue]) {
        const res = await post(`${n0.url}/mempool`, agent, cluster.token, { records: records('x', 1) });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'client certificate missing or not verified' });
      }
    } finally {
      await noCert.close();
      await rogue.close();
    }
  });
});
