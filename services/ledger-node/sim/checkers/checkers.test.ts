import type { Block } from '@scriptorium/ledger-protocol';
import {
  blockHash,
  buildBlock,
  buildGenesis,
  membershipPointerAfter,
  messageSigningBytes,
  type PrepareMessage,
  sealBytes,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import { runSeed, scenarioFor } from '../simulator.ts';
import { checkLiveness, checkSafety, checkSeals, EquivocationChecker } from './index.ts';

const signers = Array.from({ length: 4 }, (_, i) =>
  createSigner(keyPairFromSeed(new Uint8Array(32).fill(7 + i)).privateKey),
);
const genesis = buildGenesis(
  signers.map((s) => s.publicKey),
  'chk',
);

function next(parent: Block, ts: number, sealers = 3): Block {
  const b = buildBlock({
    chainId: 'chk',
    height: parent.header.height + 1,
    parentHash: blockHash(parent.header),
    prevMembershipHeight: membershipPointerAfter(parent.header),
    proposer: signers[0]?.publicKey as string,
    timestamp: ts,
    records: [],
    changes: [],
  });
  const hash = blockHash(b.header);
  const seals = signers.slice(0, sealers).map((s) => ({
    validator: s.publicKey,
    round: 0,
    signature: s.sign(sealBytes('chk', b.header.height, 0, hash)),
  }));
  return { ...b, commit_signatures: seals };
}

describe('checkers detect what they must', () => {
  const b1 = next(genesis, 1);
  const b2 = next(b1, 2);
  const b1x = next(genesis, 99);

  it('safety: agreeing chains pass; a fork or a broken parent link is reported', () => {
    expect(
      checkSafety(
        new Map([
          ['a', [genesis, b1, b2]],
          ['b', [genesis, b1]],
        ]),
      ),
    ).toEqual([]);
    expect(
      checkSafety(
        new Map([
          ['a', [genesis, b1]],
          ['b', [genesis, b1x]],
        ]),
      )[0],
    ).toMatch(/fork at height 1/);
    expect(checkSafety(new Map([['a', [genesis, b1x, b2]]])).join()).toMatch(/parent_hash/);
  });

  it('seals: a block without a quorum of valid seals is reported', () => {
    expect(checkSeals(new Map([['a', [genesis, b1, b2]]]))).toEqual([]);
    expect(checkSeals(new Map([['a', [genesis, next(genesis, 5, 2)]]]))[0]).toMatch(/finality certificate/);
  });

  it('liveness: a node below the target or diverging is reported', () => {
    expect(
      checkLiveness(
        new Map([
          ['a', [genesis, b1, b2]],
          ['b', [genesis, b1]],
        ]),
        1,
      ),
    ).toEqual([]);
    expect(
      checkLiveness(
        new Map([
          ['a', [genesis, b1, b2]],
          ['b', [genesis, b1]],
        ]),
        2,
      )[0],
    ).toMatch(/b stuck/);
    expect(
      checkLiveness(
        new Map([
          ['a', [genesis, b1]],
          ['b', [genesis, b1x]],
        ]),
        1,
      )[0],
    ).toMatch(/converge/);
  });
});

describe('equivocation checker', () => {
  it('reports two different signed messages of one type for one height and round, not a re-send', () => {
    const s = signers[0] as (typeof signers)[0];
    const prepare = (hash: string): PrepareMessage => {
      const u = {
        type: 'PREPARE',
        chain_id: 'chk',
        height: 1,
        round: 0,
        author: s.publicKey,
        block_hash: hash,
      } as const;
      return { ...u, signature: s.sign(messageSigningBytes(u as unknown as PrepareMessage)) };
    };
    const c = new EquivocationChecker();
    c.observe('n0', prepare('a'.repeat(64)));
    c.observe('n0', prepare('a'.repeat(64)));
    c.observe('n0', { ...prepare('a'.repeat(64)), round: 1 });
    expect(c.errors).toEqual([]);
    c.observe('n0', prepare('b'.repeat(64)));
    expect(c.errors[0]).toMatch(/two different PREPARE for height 1 round 0/);
  });
});

describe('simulator', () => {
  it('is deterministic: one seed, one run', { timeout: 60_000 }, () => {
    const a = runSeed(12);
    const b = runSeed(12);
    expect(a.stats).toEqual(b.stats);
    expect(a.ok).toBe(true);
  });

  it('seeds cover the fault space: node counts 4–10, twins, crashes, partitions, membership changes', () => {
    const s = Array.from({ length: 200 }, (_, i) => scenarioFor(i));
    expect(new Set(s.map((x) => x.validators))).toEqual(new Set([4, 5, 6, 7, 8, 9, 10]));
    expect(s.some((x) => x.twins > 0)).toBe(true);
    for (const kind of ['ops', 'persist-then-send', 'send-then-persist'])
      expect(s.some((x) => x.crashes.some((c) => c.point?.kind === kind))).toBe(true);
    expect(s.some((x) => x.partitions.length > 0)).toBe(true);
    expect(s.some((x) => x.commitBlackouts.length > 0)).toBe(true);
    expect(s.some((x) => x.addAt !== null)).toBe(true);
    expect(s.some((x) => x.removeAt !== null)).toBe(true);
  });

  it('crashes of the production driver happen at every kind of I/O point, and the nodes recover', {
    timeout: 120_000,
  }, () => {
    const hit: Record<string, number> = {};
    for (let seed = 0; seed < 40; seed++) {
      const r = runSeed(seed);
      expect(r.ok, `seed ${seed}: ${r.errors.join('; ')}`).toBe(true);
      for (const [kind, n] of Object.entries(r.stats.crashPointsHit)) hit[kind] = (hit[kind] ?? 0) + n;
    }
    expect(Object.keys(hit).sort()).toEqual(['ops', 'persist-then-send', 'send-then-persist']);
  });

  it('membership: a finalized ADD turns the follower into a sealing validator; a REMOVE stops seals', {
    timeout: 120_000,
  }, () => {
    let added = 0;
    let removed = 0;
    for (let seed = 0; seed < 60 && (added < 2 || removed < 2); seed++) {
      const sc = scenarioFor(seed);
      if (sc.addAt === null && sc.removeAt === null) continue;
      const r = runSeed(seed);
      expect(r.ok, r.errors.join('; ')).toBe(true);
      if (r.stats.addedAt !== null && r.stats.addedNodeSealed) added++;
      if (r.stats.removedAt !== null) removed++;
    }
    // The seals checker already proves no block after the REMOVE carries the removed key's seal
    // (seals must come from the set active at each height).
    expect(added).toBeGreaterThan(0);
    expect(removed).toBeGreaterThan(0);
  });
});
