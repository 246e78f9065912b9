// The in-flight bound per peer: a slow peer loses gossip (counted) instead of stalling the node; which peers took a
// batch of records (a record a validator holds is not gossiped again).
import type { PeerSpec } from '@scriptorium/ledger-protocol';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Gossip } from './gossip.ts';
import type { Transport } from './transport.ts';

const peer = (n: number): PeerSpec => ({ nodeId: `n${n}`, host: '127.0.0.1', port: 9000 + n, publicKey: `k${n}` });

/** A transport whose peer `slow` never answers; the others answer at once. Records each POST's path and peer. */
function transport(slow: string) {
  const posts: { peer: string; path: string; records: number }[] = [];
  const t: Transport = {
    post: () => Promise.reject(new Error('unused')),
    get: () => Promise.reject(new Error('unused')),
    close: async () => {},
    postRaw(p, path, json) {
      const spec = p as PeerSpec;
      posts.push({ peer: spec.publicKey, path, records: (JSON.parse(json).records ?? []).length });
      return spec.publicKey === slow ? new Promise(() => {}) : Promise.resolve({ status: 200, body: {} });
    },
  };
  return { t, posts };
}

/** Lets the answered sends settle (their in-flight count drops in a promise callback). */
const settled = () => new Promise((r) => setImmediate(r));

describe('Gossip', () => {
  it('drops sends to a peer with the most requests in flight, counts them, and sends to the others', async () => {
    const { t, posts } = transport('k1');
    let dropped = 0;
    const g = new Gossip(t, () => [peer(1), peer(2)], pino({ level: 'silent' }), 3, { dropped: () => dropped++ });
    for (let i = 0; i < 5; i++) {
      g.sendRaw('/block', '{}');
      await settled();
    }
    expect(posts.filter((p) => p.peer === 'k1')).toHaveLength(3);
    expect(posts.filter((p) => p.peer === 'k2')).toHaveLength(5);
    expect(dropped).toBe(2);
  });

  it('tells which peers took a batch of records, never a refusing one', async () => {
    const posts: string[] = [];
    const answers: Record<string, number> = { k1: 503, k2: 200, k3: 200 };
    const t: Transport = {
      post: () => Promise.reject(new Error('unused')),
      get: () => Promise.reject(new Error('unused')),
      close: async () => {},
      postRaw: (p) => {
        posts.push((p as PeerSpec).publicKey);
        return Promise.resolve({ status: answers[(p as PeerSpec).publicKey] ?? 500, body: {} });
      },
    };
    const delivered: string[][] = [];
    let peers = [peer(1), peer(2), peer(3)];
    const g = new Gossip(t, () => peers, pino({ level: 'silent' }), 64, {
      recordsDelivered: (records, to) => delivered.push([to.publicKey, ...records.map((r) => r.id)]),
    });
    g.records([{ id: 'a' }, { id: 'b' }]);
    g.flush();
    await settled();
    expect(delivered).toEqual([
      ['k2', 'a', 'b'],
      ['k3', 'a', 'b'],
    ]);
    // Only a refusing peer: not delivered.
    peers = [peer(1)];
    g.records([{ id: 'c' }]);
    g.flush();
    await settled();
    expect(delivered).toHaveLength(2);
    expect(posts).toEqual(['k1', 'k2', 'k3', 'k1']);
  });
});
