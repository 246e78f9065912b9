import type { Block } from '@scriptorium/ledger-protocol';
import {
  blockHash,
  buildBlock,
  buildGenesis,
  type ConsensusMessage,
  createValidatorTimeline,
  membershipPointerAfter,
  messageSigningBytes,
  verifyFinality,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import { MAX_BUFFERED, MAX_BUFFERED_PER_AUTHOR } from './gate.ts';
import { parsePersistedState } from './persisted-state.ts';
import { heightContextAfter, proposerFor } from './proposer.ts';
import type { Engine, EngineAction, PersistedState } from './types.ts';

const CHAIN = 'engine-test';
const keys = Array.from({ length: 4 }, (_, i) => keyPairFromSeed(new Uint8Array(32).fill(40 + i)));
const signers = keys.map((k) => createSigner(k.privateKey));

interface Node {
  key: string;
  engine: Engine;
  chain: Block[];
  timeline: ReturnType<typeof createValidatorTimeline>;
  persisted: PersistedState | null;
  timers: Array<{ height: number; round: number }>;
}

/** A tiny synchronous harness: FIFO delivery to every other node, a filter to drop messages. */
function makeCluster(drop: (msg: ConsensusMessage, to: string) => boolean = () => false) {
  const genesis = buildGenesis(
    keys.map((k) => k.publicKey),
    CHAIN,
  );
  const nodes: Node[] = signers.map((s) => ({
    key: s.publicKey,
    engine: createEngine({ chainId: CHAIN, self: s.publicKey, sign: s.sign, baseTimeoutMs: 100 }),
    chain: [genesis],
    timeline: createValidatorTimeline(genesis),
    persisted: null,
    timers: [],
  }));
  const queue: Array<{ to: Node; msg: ConsensusMessage }> = [];
  let ts = 1;
  const run = (node: Node, actions: EngineAction[]) => {
    for (const a of actions) {
      if (a.type === 'persist') node.persisted = structuredClone(a.state);
      else if (a.type === 'broadcast') {
        for (const other of nodes) if (other !== node && !drop(a.msg, other.key)) queue.push({ to: other, msg: a.msg });
      } else if (a.type === 'schedule-timeout') node.timers.push({ height: a.height, round: a.round });
      else if (a.type === 'request-proposal') {
        const tip = node.chain[node.chain.length - 1] as Block;
        const block = buildBlock({
          chainId: CHAIN,
          height: a.height,
          parentHash: blockHash(tip.header),
          prevMembershipHeight: membershipPointerAfter(tip.header),
          proposer: node.key,
          timestamp: ts++,
          records: [{ id: `r-${a.height}-${a.round}-${node.key.slice(0, 6)}` }],
          changes: [],
        });
        run(node, node.engine.step({ type: 'proposal-ready', height: a.height, round: a.round, block }));
      } else if (a.type === 'finalize') {
        node.chain.push(a.block);
        node.timeline.append(a.block);
        run(node, node.engine.step({ type: 'start', ctx: heightContextAfter(a.block, node.timeline) }));
      }
    }
  };
  const start = () => {
    for (const n of nodes) run(n, n.engine.step({ type: 'start', ctx: heightContextAfter(genesis, n.timeline) }));
  };
  const drain = (limit = 10_000) => {
    let steps = 0;
    while (queue.length > 0 && steps++ < limit) {
      const { to, msg } = queue.shift() as { to: Node; msg: ConsensusMessage };
      run(to, to.engine.step({ type: 'message', msg }));
    }
  };
  const fireTimers = () => {
    for (const n of nodes) {
      const timers = n.timers.splice(0);
      for (const t of timers) run(n, n.engine.step({ type: 'timeout', ...t }));
    }
  };
  return { nodes, start, drain, fireTimers, genesis };
}

describe('QBFT engine', () => {
  it('decides heights in order with a quorum of valid seals (happy path)', () => {
    const c = makeCluster();
    c.start();
    c.drain(400);
    const heights = c.nodes.map((n) => n.chain.length - 1);
    expect(Math.min(...heights)).toBeGreaterThanOrEqual(3);
    for (let h = 1; h <= 3; h++) {
      const hashes = new Set(c.nodes.map((n) => blockHash((n.chain[h] as Block).header)));
      expect(hashes.size).toBe(1);
      const b = c.nodes[0]?.chain[h] as Block;
      expect(verifyFinality(b, c.nodes[0]?.timeline.at(h) ?? []).ok).toBe(true);
      expect(b.header.parent_hash).toBe(blockHash(((c.nodes[0] as Node).chain[h - 1] as Block).header));
    }
  });

  it('rotates the proposer: (previous proposer index + 1 + round) mod N', () => {
    const c = makeCluster();
    c.start();
    c.drain(200);
    const n0 = c.nodes[0] as Node;
    const sorted = [...keys.map((k) => k.publicKey)].sort();
    expect(n0.chain[1]?.header.proposer).toBe(sorted[0]);
    expect(n0.chain[2]?.header.proposer).toBe(sorted[1]);
    expect(n0.chain[3]?.header.proposer).toBe(sorted[2]);
  });

  it('changes round when the proposer is silent, and the next proposer decides with a round-change certificate', () => {
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      CHAIN,
    );
    const t = createValidatorTimeline(genesis);
    const silent = proposerFor(heightContextAfter(genesis, t), 0);
    const c = makeCluster((msg) => msg.author === silent && msg.height === 1 && msg.round === 0);
    c.start();
    c.drain(50);
    expect(c.nodes.every((n) => n.chain.length === 1)).toBe(true);
    c.fireTimers();
    c.drain(60);
    const decided = c.nodes.filter((n) => n.chain.length > 1);
    expect(decided.length).toBe(4);
    const b1 = decided[0]?.chain[1] as Block;
    expect(b1.commit_signatures[0]?.round).toBe(1);
    expect(b1.header.proposer).not.toBe(silent);
  });

  it('re-proposes a prepared block after a round change (same hash in a later round)', () => {
    // Round 0: everyone prepares and locks, but all COMMITs are lost; round 1 must re-propose the same block.
    const c = makeCluster((msg) => msg.type === 'COMMIT' && msg.round === 0);
    c.start();
    c.drain(100);
    expect(c.nodes.every((n) => n.chain.length === 1)).toBe(true);
    const lockedHashes = new Set(c.nodes.map((n) => n.persisted?.locked && blockHash(n.persisted.locked.block.header)));
    expect(lockedHashes.size).toBe(1);
    c.fireTimers();
    c.drain(60);
    const b1 = c.nodes[0]?.chain[1] as Block;
    expect(b1).toBeDefined();
    expect(blockHash(b1.header)).toBe([...lockedHashes][0]);
    expect(b1.commit_signatures[0]?.round).toBe(1);
  });

  it('persists before broadcasting, and a restored engine re-sends the same signed votes only', () => {
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      CHAIN,
    );
    const t = createValidatorTimeline(genesis);
    const ctx = heightContextAfter(genesis, t);
    const proposerIdx = signers.findIndex((s) => s.publicKey === proposerFor(ctx, 0));
    const voterIdx = (proposerIdx + 1) % 4;
    const proposer = signers[proposerIdx] as (typeof signers)[0];
    const voter = signers[voterIdx] as (typeof signers)[0];
    const p = createEngine({ chainId: CHAIN, self: proposer.publicKey, sign: proposer.sign, baseTimeoutMs: 100 });
    p.step({ type: 'start', ctx });
    const mk = (ts: number) =>
      buildBlock({
        chainId: CHAIN,
        height: 1,
        parentHash: ctx.parentHash,
        prevMembershipHeight: ctx.prevMembershipHeight,
        proposer: proposer.publicKey,
        timestamp: ts,
        records: [],
        changes: [],
      });
    const out = p.step({ type: 'proposal-ready', height: 1, round: 0, block: mk(1) });
    const firstBroadcast = out.findIndex((a) => a.type === 'broadcast');
    expect(out.findIndex((a) => a.type === 'persist')).toBeLessThan(firstBroadcast);
    const pre = out.find((a) => a.type === 'broadcast' && a.msg.type === 'PRE-PREPARE');
    if (pre?.type !== 'broadcast') throw new Error('no PRE-PREPARE');

    const v = createEngine({ chainId: CHAIN, self: voter.publicKey, sign: voter.sign, baseTimeoutMs: 100 });
    v.step({ type: 'start', ctx });
    const actions = v.step({ type: 'message', msg: pre.msg });
    const persisted = actions.filter((a) => a.type === 'persist').at(-1);
    if (persisted?.type !== 'persist') throw new Error('no persist');
    const prepare = actions.find((a) => a.type === 'broadcast');
    if (prepare?.type !== 'broadcast') throw new Error('no PREPARE');
    expect(actions.indexOf(persisted)).toBeLessThan(actions.indexOf(prepare));

    // Crash and restart from the persisted state (read back through its schema, as from disk).
    const saved = parsePersistedState(JSON.parse(JSON.stringify(persisted.state)));
    expect(saved).toEqual(persisted.state);
    expect(() => parsePersistedState({ ...saved, round: -1 })).toThrow();
    const v2 = createEngine({ chainId: CHAIN, self: voter.publicKey, sign: voter.sign, baseTimeoutMs: 100 }, saved);
    const resent = v2.step({ type: 'start', ctx }).filter((a) => a.type === 'broadcast');
    expect(resent.map((a) => (a.type === 'broadcast' ? a.msg : null))).toEqual([prepare.msg]);
    // An equivocating proposal for the same round (another block) gets no second PREPARE.
    const p2 = createEngine({ chainId: CHAIN, self: proposer.publicKey, sign: proposer.sign, baseTimeoutMs: 100 });
    p2.step({ type: 'start', ctx });
    const other = p2
      .step({ type: 'proposal-ready', height: 1, round: 0, block: mk(2) })
      .find((a) => a.type === 'broadcast' && a.msg.type === 'PRE-PREPARE');
    if (other?.type !== 'broadcast') throw new Error('no second PRE-PREPARE');
    expect(v2.step({ type: 'message', msg: other.msg }).filter((a) => a.type === 'broadcast')).toEqual([]);
  });

  it('buffers messages of a future height and uses them once the height starts', () => {
    // The lagging node misses all of height 1; it receives height-2 messages before it has block 1.
    // (Not the proposer of height 1 or 2: those are sorted[0] and sorted[1].)
    const laggingKey = [...keys.map((k) => k.publicKey)].sort()[3];
    const c2 = makeCluster((msg, to) => to === laggingKey && msg.height === 1);
    c2.start();
    while (c2.nodes.some((n) => n.key !== laggingKey && n.chain.length < 2)) c2.drain(1);
    c2.drain(6);
    const lag = c2.nodes.find((n) => n.key === laggingKey) as Node;
    expect(lag.chain.length).toBe(1);
    const b1 = c2.nodes[0]?.chain[1] as Block;
    lag.chain.push(b1);
    lag.timeline.append(b1);
    const acts = lag.engine.step({ type: 'start', ctx: heightContextAfter(b1, lag.timeline) });
    // It already holds height-2 messages from the others: it votes without waiting.
    expect(acts.some((a) => a.type === 'broadcast')).toBe(true);
  });
});

describe('restart safety (targeted)', () => {
  it('a proposer restored after proposing re-sends the same PRE-PREPARE and never asks for a new block', () => {
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      CHAIN,
    );
    const ctx = heightContextAfter(genesis, createValidatorTimeline(genesis));
    const me = signers.find((s) => s.publicKey === proposerFor(ctx, 0)) as (typeof signers)[0];
    const cfg = { chainId: CHAIN, self: me.publicKey, sign: me.sign, baseTimeoutMs: 100 };
    const e = createEngine(cfg);
    expect(e.step({ type: 'start', ctx }).map((a) => a.type)).toContain('request-proposal');
    const block = buildBlock({
      chainId: CHAIN,
      height: 1,
      parentHash: ctx.parentHash,
      prevMembershipHeight: ctx.prevMembershipHeight,
      proposer: me.publicKey,
      timestamp: 5,
      records: [],
      changes: [],
    });
    const out = e.step({ type: 'proposal-ready', height: 1, round: 0, block });
    const state = out.filter((a) => a.type === 'persist').at(-1);
    const sentMsgs = out.flatMap((a) => (a.type === 'broadcast' ? [a.msg] : []));
    if (state?.type !== 'persist') throw new Error('no persist');
    const again = createEngine(cfg, JSON.parse(JSON.stringify(state.state)));
    const after = again.step({ type: 'start', ctx });
    expect(after.map((a) => a.type)).not.toContain('request-proposal');
    expect(after.flatMap((a) => (a.type === 'broadcast' ? [a.msg] : []))).toEqual(expect.arrayContaining(sentMsgs));
    // A late proposal-ready for the same round (e.g. a stale driver callback) is refused.
    const other = { ...block, header: { ...block.header, timestamp: 6 } };
    expect(again.step({ type: 'proposal-ready', height: 1, round: 0, block: other })).toEqual([]);
  });

  it('a restored state for an older height is ignored', () => {
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      CHAIN,
    );
    const t = createValidatorTimeline(genesis);
    const ctx = heightContextAfter(genesis, t);
    const s = signers[0] as (typeof signers)[0];
    const stale: PersistedState = {
      version: 1,
      height: 0,
      round: 3,
      locked: null,
      sent: { proposal: null, prepare: null, commit: null, roundChange: null },
    };
    const e = createEngine({ chainId: CHAIN, self: s.publicKey, sign: s.sign, baseTimeoutMs: 100 }, stale);
    e.step({ type: 'start', ctx });
    expect(e.status()).toMatchObject({ height: 1, round: 0, running: true });
  });
});

describe('vote counting', () => {
  it('counts one PREPARE per author: duplicates and an equivocating second vote do not make a quorum', () => {
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      CHAIN,
    );
    const ctx = heightContextAfter(genesis, createValidatorTimeline(genesis));
    const proposer = signers.find((s) => s.publicKey === proposerFor(ctx, 0)) as (typeof signers)[0];
    const [me, other] = signers.filter((s) => s !== proposer) as [(typeof signers)[0], (typeof signers)[0]];
    const pe = createEngine({ chainId: CHAIN, self: proposer.publicKey, sign: proposer.sign, baseTimeoutMs: 100 });
    pe.step({ type: 'start', ctx });
    const block = buildBlock({
      chainId: CHAIN,
      height: 1,
      parentHash: ctx.parentHash,
      prevMembershipHeight: ctx.prevMembershipHeight,
      proposer: proposer.publicKey,
      timestamp: 1,
      records: [],
      changes: [],
    });
    const sent = pe
      .step({ type: 'proposal-ready', height: 1, round: 0, block })
      .flatMap((a) => (a.type === 'broadcast' ? [a.msg] : []));
    const pre = sent.find((m) => m.type === 'PRE-PREPARE') as ConsensusMessage;
    const proposerPrepare = sent.find((m) => m.type === 'PREPARE') as ConsensusMessage;
    const e = createEngine({ chainId: CHAIN, self: me.publicKey, sign: me.sign, baseTimeoutMs: 100 });
    e.step({ type: 'start', ctx });
    e.step({ type: 'message', msg: pre });
    // Own PREPARE (1) + the proposer's (2), delivered three times: still 2 < quorum 3, no COMMIT.
    for (let i = 0; i < 3; i++) {
      expect(e.step({ type: 'message', msg: proposerPrepare }).some((a) => a.type === 'broadcast')).toBe(false);
    }
    // The same author voting for another hash does not count either.
    const hash = blockHash(block.header);
    const forged = { ...proposerPrepare, block_hash: 'f'.repeat(64) } as ConsensusMessage;
    expect(e.step({ type: 'message', msg: forged })).toMatchObject([{ type: 'reject', reason: 'bad_signature' }]);
    // A third distinct author completes the quorum: COMMIT for the proposal's hash.
    const op = createEngine({ chainId: CHAIN, self: other.publicKey, sign: other.sign, baseTimeoutMs: 100 });
    op.step({ type: 'start', ctx });
    const third = op.step({ type: 'message', msg: pre }).find((a) => a.type === 'broadcast');
    if (third?.type !== 'broadcast') throw new Error('no PREPARE from the third node');
    const commit = e.step({ type: 'message', msg: third.msg }).find((a) => a.type === 'broadcast');
    expect(commit?.type === 'broadcast' && commit.msg.type === 'COMMIT' && commit.msg.block_hash).toBe(hash);
  });
});

describe('late commits', () => {
  it('a COMMIT quorum of an older round still decides, with that round in the seals', () => {
    const held: ConsensusMessage[] = [];
    const laggingKey = [...keys.map((k) => k.publicKey)].sort()[3] as string;
    const c = makeCluster((msg, to) => {
      if (to === laggingKey && msg.type === 'COMMIT' && msg.height === 1) {
        held.push(msg);
        return true;
      }
      // Keep height-2 traffic away from the lagging node too.
      return to === laggingKey && msg.height > 1;
    });
    c.start();
    c.drain(200);
    const lag = c.nodes.find((n) => n.key === laggingKey) as Node;
    expect(lag.chain.length).toBe(1);
    // The lagging node times out into round 1 ...
    const t = lag.timers.splice(0).find((x) => x.height === 1 && x.round === 0);
    if (!t) throw new Error('no round-0 timer');
    const rc = lag.engine.step({ type: 'timeout', ...t });
    expect(lag.engine.status().round).toBe(1);
    expect(rc.some((a) => a.type === 'broadcast' && a.msg.type === 'ROUND_CHANGE')).toBe(true);
    // ... then the round-0 COMMITs arrive: it decides height 1 anyway.
    let finalized: EngineAction | undefined;
    for (const m of held) {
      finalized ??= lag.engine.step({ type: 'message', msg: m }).find((a) => a.type === 'finalize');
    }
    if (finalized?.type !== 'finalize') throw new Error('late commits did not decide');
    expect(finalized.round).toBe(0);
    expect(blockHash(finalized.block.header)).toBe(blockHash(((c.nodes[0] as Node).chain[1] as Block).header));
    expect(verifyFinality(finalized.block, lag.timeline.at(1)).ok).toBe(true);
  });
});

describe('round-change thresholds', () => {
  const genesis = buildGenesis(
    keys.map((k) => k.publicKey),
    CHAIN,
  );
  const ctx = heightContextAfter(genesis, createValidatorTimeline(genesis));
  const rc = (s: (typeof signers)[0], round: number): ConsensusMessage => {
    const u = {
      type: 'ROUND_CHANGE',
      chain_id: CHAIN,
      height: 1,
      round,
      author: s.publicKey,
      prepared_round: null,
      prepared_hash: null,
    } as const;
    return { ...u, signature: s.sign(messageSigningBytes(u as unknown as ConsensusMessage)) } as ConsensusMessage;
  };
  const [me, a, b, c] = signers as [(typeof signers)[0], (typeof signers)[0], (typeof signers)[0], (typeof signers)[0]];
  const fresh = () => {
    const e = createEngine({ chainId: CHAIN, self: me.publicKey, sign: me.sign, baseTimeoutMs: 100 });
    e.step({ type: 'start', ctx });
    return e;
  };

  it('f+1 ROUND_CHANGEs for higher rounds make a node join the lowest of them and send its own', () => {
    const e = fresh();
    expect(e.step({ type: 'message', msg: rc(a, 5) }).some((x) => x.type === 'broadcast')).toBe(false);
    expect(e.status().round).toBe(0); // f = 1: one is not enough
    const out = e.step({ type: 'message', msg: rc(b, 3) });
    expect(e.status().round).toBe(3);
    const sent = out.find((x) => x.type === 'broadcast');
    expect(sent?.type === 'broadcast' && sent.msg.type === 'ROUND_CHANGE' && sent.msg.round).toBe(3);
    expect(out.findIndex((x) => x.type === 'persist')).toBeLessThan(out.findIndex((x) => x.type === 'broadcast'));
    expect(out).toContainEqual({ type: 'schedule-timeout', height: 1, round: 3, afterMs: 800 });
  });

  it('a quorum of ROUND_CHANGEs for a round makes its proposer propose with a certificate', () => {
    const round = [1, 2, 3, 4, 5].find((r) => proposerFor(ctx, r) === me.publicKey) as number;
    const e = fresh();
    expect(e.step({ type: 'message', msg: rc(a, round) }).map((x) => x.type)).not.toContain('request-proposal');
    // The second makes f+1: it joins the round and sends its own ROUND_CHANGE, which completes a quorum
    // (3 of 4, its own included); nobody is locked, so it asks the driver for a new block.
    const out = e.step({ type: 'message', msg: rc(b, round) });
    expect(e.status().round).toBe(round);
    expect(out.find((x) => x.type === 'request-proposal')).toEqual({ type: 'request-proposal', height: 1, round });
    e.step({ type: 'message', msg: rc(c, round) });
    const block = buildBlock({
      chainId: CHAIN,
      height: 1,
      parentHash: ctx.parentHash,
      prevMembershipHeight: ctx.prevMembershipHeight,
      proposer: me.publicKey,
      timestamp: 9,
      records: [],
      changes: [],
    });
    const pre = e
      .step({ type: 'proposal-ready', height: 1, round, block })
      .find((x) => x.type === 'broadcast' && x.msg.type === 'PRE-PREPARE');
    if (pre?.type !== 'broadcast' || pre.msg.type !== 'PRE-PREPARE') throw new Error('no PRE-PREPARE');
    expect(pre.msg.justification?.round_changes.length).toBeGreaterThanOrEqual(3);
  });
});

describe('future-height buffer', () => {
  it('caps what one author can buffer, so others still get in', () => {
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      CHAIN,
    );
    const ctx = heightContextAfter(genesis, createValidatorTimeline(genesis));
    const [me, noisy, quiet] = signers as [(typeof signers)[0], (typeof signers)[0], (typeof signers)[0]];
    const e = createEngine({ chainId: CHAIN, self: me.publicKey, sign: me.sign, baseTimeoutMs: 100 });
    e.step({ type: 'start', ctx });
    const prepare = (s: (typeof signers)[0], round: number): ConsensusMessage => {
      const u = { type: 'PREPARE', chain_id: CHAIN, height: 2, round, author: s.publicKey, block_hash: 'a'.repeat(64) };
      return { ...u, signature: s.sign(messageSigningBytes(u as unknown as ConsensusMessage)) } as ConsensusMessage;
    };
    for (let r = 0; r < MAX_BUFFERED_PER_AUTHOR + 50; r++) e.step({ type: 'message', msg: prepare(noisy, r % 60) });
    expect(e.status().buffered).toBe(MAX_BUFFERED_PER_AUTHOR);
    // Nothing happens for a future height; the quiet validator's message is still buffered (not refused).
    expect(e.step({ type: 'message', msg: prepare(quiet, 0) })).toEqual([]);
    expect(e.status().buffered).toBe(MAX_BUFFERED_PER_AUTHOR + 1);
    expect(MAX_BUFFERED_PER_AUTHOR).toBeLessThan(MAX_BUFFERED);
  });
});
