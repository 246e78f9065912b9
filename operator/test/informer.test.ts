import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../src/kube/client.ts';
import { Informer } from '../src/kube/informer.ts';
import { RESOURCES } from '../src/kube/resources.ts';
import { eventually, quietLog } from './helpers.ts';

// Error injection the real API server cannot do on demand: a local HTTP server that fails a list with 500,
// drops a watch mid-stream, and sends a 410 Gone. The informer must recover from each, relisting and
// reporting the deletes it missed.
let server: http.Server;
let client: KubeClient;
const state = new Map<string, number>([['a', 1]]);
let rv = 1;
let lists = 0;
let watches = 0;
const open = new Set<http.ServerResponse>();

const cm = (name: string, version: number) => ({
  metadata: { name, namespace: 'x', resourceVersion: String(version), uid: `uid-${name}` },
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/api/v1/namespaces/x/configmaps') return void res.writeHead(404).end();
    if (url.searchParams.get('watch') !== 'true') {
      lists++;
      if (lists === 1) return void res.writeHead(500).end('{"reason":"InternalError","message":"etcd hiccup"}');
      const items = [...state].map(([n, v]) => cm(n, v));
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ items, metadata: { resourceVersion: String(rv) } }));
    }
    watches++;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (watches === 1) {
      // b is added, then the connection drops; meanwhile a is deleted and c added, unseen.
      rv++;
      state.set('b', rv);
      res.write(`${JSON.stringify({ type: 'ADDED', object: cm('b', rv) })}\n`);
      state.delete('a');
      rv++;
      state.set('c', rv);
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    if (watches === 2) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: 'too old' } })}\n`);
      return;
    }
    open.add(res); // later watches stay open until the test ends
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'fake', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
    currentContext: 'c',
  });
  client = new KubeClient(kc);
});

afterAll(async () => {
  for (const res of open) res.end();
  client?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('Informer', () => {
  it('restarts after a failed list, a dropped watch and a 410, and reports missed deletes', async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    const informer = new Informer(client, RESOURCES.ConfigMap, {
      namespace: 'x',
      log: quietLog,
      onError: (err) => errors.push(err),
    });
    informer.on((type, obj) => seen.push(`${type}:${obj.metadata.name}`));
    informer.start();
    await informer.waitForSync();
    await eventually('three watches', () => watches >= 3, 10_000);
    await eventually('cache converged', () => informer.size === 2 && informer.get('x', 'c') !== undefined, 10_000);
    await informer.stop();

    expect(seen).toContain('added:a');
    expect(seen).toContain('added:b');
    expect(seen).toContain('deleted:a');
    expect(seen).toContain('added:c');
    expect(informer.get('x', 'a')).toBeUndefined();
    expect(informer.restarts).toBeGreaterThanOrEqual(3);
    expect(errors.length).toBe(informer.restarts);
    expect(lists).toBeGreaterThanOrEqual(4); // failed, first, after the drop, after the 410
    expect(informer.get('x', 'b')?.kind).toBe('ConfigMap');
  });
});
