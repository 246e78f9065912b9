// The sync step on a network port the test answers by hand: the highest peer is pulled from, blocks are applied
// strictly in height order whatever order their answers come in, at most PULL_AHEAD are asked at a time, a
// refused block ends the pass (and another starts), a request during a pass runs one more pass, and readiness.
import { describe, expect, it } from 'vitest';
import type { Receipt } from './applier.ts';
import type { SyncNetwork, SyncPeer } from './ports.ts';
import { ChainSync, PULL_AHEAD } from './sync.ts';

const peerA: SyncPeer = { publicKey: 'a', nodeId: 'A' };
const peerB: SyncPeer = { publicKey: 'b', nodeId: 'B' };

function harness(peers: SyncPeer[] = [peerA, peerB]) {
  const chain = { height: 0 };
  const heightAsks: Array<{ peer: SyncPeer; done: (h: number | undefined) => void }> = [];
  const blockAsks: Array<{ peer: SyncPeer; height: number; done: (body: unknown) => void }> = [];
  const applied: number[] = [];
  const warnings: unknown[] = [];
  const refuse = new Set<number>();
  const network: SyncNetwork = {
    peers: () => peers,
    height: (peer, done) => heightAsks.push({ peer, done }),
    block: (peer, height, done) => blockAsks.push({ peer, height, done }),
  };
  const receive = (body: unknown): Receipt => {
    const h = (body as { height: number }).height;
    if (h <= chain.height) return { height: h, status: 'known' };
    if (refuse.has(h)) return { height: h, status: 'refused', reason: 'bad' };
    chain.height = h;
    applied.push(h);
    return { height: h, status: 'applied' };
  };
  const sync = new ChainSync({ chain, network, receive, log: { warn: (obj) => warnings.push(obj) } });
  /** Answers the block request for `height` (undefined body: the peer failed). */
  const answer = (height: number, ok = true) => {
    const i = blockAsks.findIndex((a) => a.height === height);
    const [ask] = blockAsks.splice(i, 1);
    ask?.done(ok ? { height } : undefined);
  };
  return { chain, heightAsks, blockAsks, applied, warnings, refuse, sync, answer };
}

describe('ChainSync', () => {
  it('pulls from the highest peer, in height order, PULL_AHEAD at a time', () => {
    const t = harness();
    t.sync.request();
    expect(t.heightAsks.map((a) => a.peer.nodeId)).toEqual(['A', 'B']);
    t.heightAsks[1]?.done(20);
    expect(t.blockAsks).toEqual([]); // waits for every peer
    t.heightAsks[0]?.done(5);
    expect(t.blockAsks.map((a) => a.height)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].slice(0, PULL_AHEAD));
    expect(t.blockAsks.every((a) => a.peer === peerB)).toBe(true);
    t.answer(3);
    t.answer(2);
    expect(t.applied).toEqual([]);
    t.answer(1);
    expect(t.applied).toEqual([1, 2, 3]);
    expect(Math.max(...t.blockAsks.map((a) => a.height))).toBe(3 + PULL_AHEAD);
    while (t.blockAsks.length > 0) t.answer(Math.min(...t.blockAsks.map((a) => a.height)));
    expect(t.applied).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(t.sync.syncing).toBe(false);
    expect(t.sync.readiness()).toEqual({ ready: true, height: 20, best_peer_height: 20 });
    expect(t.sync.heightOf('a')).toBe(5);
  });

  it('a refused or missing block ends the pass once the others are in; another pass follows', () => {
    const t = harness([peerA]);
    t.sync.request();
    t.heightAsks.shift()?.done(3);
    t.refuse.add(2);
    t.answer(1);
    t.answer(2);
    expect(t.applied).toEqual([1]);
    expect(t.warnings).toEqual([{ peer: 'A', height: 2, reason: 'bad' }]);
    expect(t.sync.syncing).toBe(true); // block 3 still in flight
    t.answer(3);
    expect(t.heightAsks.length).toBe(1); // the next pass polls again
    t.refuse.clear();
    t.heightAsks.shift()?.done(3);
    t.answer(2, false);
    t.answer(3);
    expect(t.applied).toEqual([1]);
  });

  it('a request during a pass runs one more pass after it; readiness needs a poll', () => {
    const t = harness([peerA]);
    expect(t.sync.readiness().ready).toBe(false);
    t.sync.request();
    t.sync.request();
    t.sync.request();
    expect(t.heightAsks.length).toBe(1);
    t.heightAsks.shift()?.done(0);
    expect(t.heightAsks.length).toBe(1);
    t.heightAsks.shift()?.done(1);
    expect(t.sync.readiness()).toEqual({ ready: true, height: 0, best_peer_height: 1 });
    t.answer(1);
    expect(t.applied).toEqual([1]);
    t.sync.stop();
    t.sync.request();
    expect(t.heightAsks.length).toBe(0);
    expect(t.sync.readiness().ready).toBe(false);
  });
});
