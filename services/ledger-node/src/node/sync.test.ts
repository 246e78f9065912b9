// The sync step on a network port the test answers by hand: the highest peer is pulled from, blocks are applied
// strictly in height order whatever order their answers come in, at most PULL_AHEAD are asked at a time, a
// block one peer does not serve (or serves refused) is asked of the next peer that has it, one that no peer serves
// ends the pass until the next request, a request during a pass runs one more pass, and readiness.
import { describe, expect, it } from 'vitest';
import type { Receipt } from './applier.ts';
import type { SyncNetwork, SyncPeer } from './ports.ts';
import { ChainSync, PULL_AHEAD } from './sync.ts';

const peerA: SyncPeer = { publicKey: 'a', nodeId: 'A' };
const peerB: SyncPeer = { publicKey: 'b', nodeId: 'B' };

function harness(peers: SyncPeer[] = [peerA, peerB]) {
  const chain = { height: 0 };
  const clock = { now: 1_000 };
  const errors: unknown[] = [];
  let failApply: number | undefined;
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
    if (h === failApply) throw new Error('disk full');
    chain.height = h;
    applied.push(h);
    return { height: h, status: 'applied' };
  };
  const log = { warn: (obj: object) => warnings.push(obj), error: (obj: object) => errors.push(obj) };
  /** The poll deadlines armed and not cancelled. */
  const deadlines = new Set<() => void>();
  const after = (_ms: number, fn: () => void) => {
    deadlines.add(fn);
    return () => deadlines.delete(fn);
  };
  const sync = new ChainSync({ chain, network, receive, log, now: () => clock.now, after });
  /** Answers the block request for `height` (undefined body: the peer failed). */
  const answer = (height: number, ok = true) => {
    const i = blockAsks.findIndex((a) => a.height === height);
    const [ask] = blockAsks.splice(i, 1);
    ask?.done(ok ? { height } : undefined);
  };
  const failApplyAt = (h: number) => {
    failApply = h;
  };
  const expire = () => {
    for (const fn of [...deadlines]) {
      deadlines.delete(fn);
      fn();
    }
  };
  return {
    chain,
    clock,
    heightAsks,
    blockAsks,
    applied,
    warnings,
    errors,
    refuse,
    sync,
    answer,
    failApplyAt,
    deadlines,
    expire,
  };
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

  it('a refused or missing block ends the pass once the others are in; the next request polls again', () => {
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
    expect(t.sync.syncing).toBe(false); // a failed pass is not followed at once: the next request starts one
    expect(t.heightAsks.length).toBe(0);
    t.sync.request();
    expect(t.heightAsks.length).toBe(1); // the next pass polls again
    t.refuse.clear();
    t.heightAsks.shift()?.done(3);
    t.answer(2, false);
    t.answer(3);
    expect(t.applied).toEqual([1]);
  });

  it('a block the highest peer does not serve, or serves refused, is asked of the next peer that has it', () => {
    const peerC: SyncPeer = { publicKey: 'c', nodeId: 'C' };
    const t = harness([peerA, peerB, peerC]);
    t.sync.request();
    t.heightAsks[0]?.done(4);
    t.heightAsks[1]?.done(6);
    t.heightAsks[2]?.done(2);
    const from = (height: number) => t.blockAsks.filter((a) => a.height === height).map((a) => a.peer.nodeId);
    expect(from(1)).toEqual(['B']);
    t.answer(1, false); // B starved: block 1 goes to A, then C
    expect(from(1)).toEqual(['A']);
    t.answer(1, false);
    expect(from(1)).toEqual(['C']);
    t.answer(1);
    expect(t.applied).toEqual([1]);
    t.refuse.add(3);
    t.answer(2);
    t.answer(3); // B serves a block that does not verify: A has it too (C does not: its height is 2)
    expect(t.warnings).toEqual([{ peer: 'B', height: 3, reason: 'bad' }]);
    expect(from(3)).toEqual(['A']);
    t.refuse.clear();
    t.answer(3);
    while (t.blockAsks.length > 0) t.answer(Math.min(...t.blockAsks.map((a) => a.height)));
    expect(t.applied).toEqual([1, 2, 3, 4, 5, 6]);
    expect(t.sync.syncing).toBe(false);
  });

  it('a block no peer serves ends the pass with a warning', () => {
    const t = harness();
    t.sync.request();
    t.heightAsks[0]?.done(1);
    t.heightAsks[1]?.done(1);
    t.answer(1, false);
    t.answer(1, false);
    expect(t.warnings).toEqual([{ peer: 'B', height: 1 }]);
    expect(t.applied).toEqual([]);
    expect(t.sync.syncing).toBe(false);
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

  it('state() tells the phase, its age, the peers that answered and the blocks in flight', () => {
    const t = harness();
    expect(t.sync.state()).toEqual({
      phase: 'idle',
      phase_ms: 0,
      passes: 0,
      peers_asked: 0,
      peers_answered: 0,
      blocks_in_flight: 0,
      last_pass: null,
    });
    t.sync.request();
    t.clock.now += 1500;
    t.heightAsks[0]?.done(3);
    expect(t.sync.state()).toMatchObject({ phase: 'polling', phase_ms: 1500, peers_asked: 2, peers_answered: 1 });
    t.heightAsks[1]?.done(undefined);
    expect(t.sync.state()).toMatchObject({ phase: 'pulling', phase_ms: 0, peers_answered: 1, blocks_in_flight: 3 });
    t.clock.now += 700;
    t.answer(1);
    expect(t.sync.state()).toMatchObject({ phase: 'pulling', phase_ms: 700, blocks_in_flight: 2 });
    t.answer(2);
    t.answer(3);
    expect(t.sync.state()).toMatchObject({ phase: 'idle', passes: 1, blocks_in_flight: 0, last_pass: 'caught_up' });
  });

  it('no peer answering ends the pass as no_answer, with a warning at most once a minute', () => {
    const t = harness();
    for (let i = 0; i < 3; i++) {
      t.sync.request();
      for (const ask of t.heightAsks.splice(0)) ask.done(undefined);
      t.clock.now += 1000;
    }
    expect(t.sync.state()).toMatchObject({ phase: 'idle', passes: 3, peers_answered: 0, last_pass: 'no_answer' });
    expect(t.sync.readiness().ready).toBe(false);
    expect(t.warnings).toEqual([{ peers: 2 }]);
    t.clock.now += 60_000;
    t.sync.request();
    for (const ask of t.heightAsks.splice(0)) ask.done(undefined);
    expect(t.warnings).toEqual([{ peers: 2 }, { peers: 2 }]);
  });

  it('a block that fails to apply ends the pass with an error instead of hanging it', () => {
    const t = harness([peerA]);
    t.failApplyAt(2);
    t.sync.request();
    t.heightAsks.shift()?.done(3);
    t.answer(1);
    t.answer(2);
    expect(t.errors).toMatchObject([{ height: 2 }]);
    t.answer(3);
    expect(t.sync.state()).toMatchObject({ phase: 'idle', last_pass: 'block_unserved' });
    t.failApplyAt(-1);
    t.sync.request();
    t.heightAsks.shift()?.done(3);
    t.answer(2);
    t.answer(3);
    expect(t.applied).toEqual([1, 2, 3]);
  });

  it('a peer that does not answer its height holds the poll only until the deadline', () => {
    const t = harness();
    t.sync.request();
    expect(t.deadlines.size).toBe(1);
    t.heightAsks[0]?.done(4); // B never answers (its address no longer resolves)
    expect(t.blockAsks).toEqual([]);
    t.expire();
    expect(t.blockAsks.map((a) => [a.peer.nodeId, a.height])).toEqual([
      ['A', 1],
      ['A', 2],
      ['A', 3],
      ['A', 4],
    ]);
    t.heightAsks[1]?.done(9); // late: counts for readiness, does not restart the pass
    expect(t.sync.readiness()).toMatchObject({ ready: false, best_peer_height: 9 });
    expect(t.heightAsks.length).toBe(2);
    while (t.blockAsks.length > 0) t.answer(Math.min(...t.blockAsks.map((a) => a.height)));
    expect(t.applied).toEqual([1, 2, 3, 4]);
    expect(t.sync.state()).toMatchObject({ phase: 'idle', last_pass: 'caught_up' });
    // A poll every peer answers cancels its deadline.
    t.sync.request();
    t.heightAsks[2]?.done(4);
    t.heightAsks[3]?.done(4);
    expect(t.deadlines.size).toBe(0);
  });
});
