// Light evidence on simulated chains (property test): for random chains — faults, crashes, Byzantine twins, an ADD
// and a REMOVE — the evidence of every record of every honest chain verifies from block 0 alone, and each way of
// dropping or altering a part of it (a membership block, a header field, a seal, a change, the record, a proof step)
// is refused.
import { type Block, type LightEvidence, quorumSize, verifyLightEvidence } from '@scriptorium/ledger-protocol';
import { describe, expect, it } from 'vitest';
import { checkEvidence, evidenceFrom } from './checkers/index.ts';
import { Prng } from './prng.ts';
import { runSeed } from './simulator.ts';

/** Chains of seeds that changed the validator set (an ADD, a REMOVE or both), up to `count` of them. */
function chainsWithChanges(count: number): Array<{ seed: number; chains: ReadonlyMap<string, readonly Block[]> }> {
  const out: Array<{ seed: number; chains: ReadonlyMap<string, readonly Block[]> }> = [];
  for (let seed = 1; out.length < count && seed < 2000; seed++) {
    let chains: ReadonlyMap<string, readonly Block[]> | undefined;
    const r = runSeed(seed, { inspect: (c) => (chains = c) });
    if (r.ok && chains && r.stats.addedAt !== null && r.stats.removedAt !== null) out.push({ seed, chains });
  }
  return out;
}

type Mutation = [name: string, change: (e: LightEvidence) => void];

const flipHex = (hex: string) => `${hex[0] === 'a' ? 'b' : 'a'}${hex.slice(1)}`;
const HEADER_FIELDS = [
  'chain_id',
  'height',
  'parent_hash',
  'merkle_root',
  'proposer',
  'timestamp',
  'record_count',
  'change_count',
  'prev_membership_height',
] as const;

function alterField(header: Record<string, unknown>, field: string): void {
  const v = header[field];
  header[field] =
    typeof v === 'number' ? v + 1 : typeof v === 'string' && /^[0-9a-f]{64}$/.test(v) ? flipHex(v) : `${v}x`;
}

/** Every mutation of `e` this test knows: each must make the evidence fail. */
function mutations(e: LightEvidence): Mutation[] {
  const list: Mutation[] = [];
  const sealed = [
    ...e.membership.map((_, k) => ({ where: `membership[${k}]`, at: (x: LightEvidence) => x.membership[k] })),
    { where: 'block', at: (x: LightEvidence) => x.block },
  ];
  for (const [k] of e.membership.entries()) {
    list.push([`drop membership[${k}]`, (x) => void x.membership.splice(k, 1)]);
    if (k + 1 < e.membership.length)
      list.push([
        `swap membership[${k}] and [${k + 1}]`,
        (x) => void x.membership.splice(k, 2, x.membership[k + 1] as never, x.membership[k] as never),
      ]);
    list.push([`drop a change of membership[${k}]`, (x) => void x.membership[k]?.validator_changes.pop()]);
    list.push([
      `alter a change of membership[${k}]`,
      (x) => {
        const c = x.membership[k]?.validator_changes[0];
        if (c) c.change = { ...c.change, action: c.change.action === 'ADD' ? 'REMOVE' : 'ADD' };
      },
    ]);
    list.push([
      `alter a change proof of membership[${k}]`,
      (x) => {
        const step = x.membership[k]?.validator_changes[0]?.proof[0];
        if (step) step.sibling = flipHex(step.sibling);
      },
    ]);
  }
  for (const { where, at } of sealed) {
    for (const field of HEADER_FIELDS)
      list.push([`alter ${where}.header.${field}`, (x) => alterField(at(x)?.header as never, field)]);
    list.push([
      `alter a seal of ${where}`,
      (x) => {
        const seal = at(x)?.commit_signatures[0];
        if (seal) seal.signature = flipHex(seal.signature);
      },
    ]);
    list.push([
      `seals of ${where} below quorum`,
      (x) => {
        const s = at(x);
        // The fewest seals any set of its height could accept minus one: below quorum whatever the set's size.
        if (s) s.commit_signatures = s.commit_signatures.slice(0, quorumSize(s.commit_signatures.length) - 1);
      },
    ]);
  }
  const first = (x: LightEvidence) => x.proof.proof[0] ?? { sibling: '', right: false };
  list.push([
    'alter the record',
    (x) => {
      const record = x.proof.record as { id: string };
      x.proof.record = { ...record, id: `${record.id}-forged` };
    },
  ]);
  list.push([
    'alter a proof step',
    (x) => {
      first(x).sibling = flipHex(first(x).sibling);
    },
  ]);
  list.push([
    'flip a proof step',
    (x) => {
      first(x).right = !first(x).right;
    },
  ]);
  list.push(['drop a proof step', (x) => void x.proof.proof.shift()]);
  list.push([
    'claim another index',
    (x) => {
      x.proof.index = x.proof.index === 0 ? 1 : x.proof.index - 1;
    },
  ]);
  list.push([
    'alter the block hash named by the proof',
    (x) => {
      x.proof.block_hash = flipHex(x.proof.block_hash);
    },
  ]);
  list.push([
    'another genesis hash',
    (x) => {
      x.genesis_hash = flipHex(x.genesis_hash);
    },
  ]);
  return list;
}

describe('light evidence on simulated chains', () => {
  const cases = chainsWithChanges(12);

  it('the simulator makes chains with both an ADD and a REMOVE', () => {
    expect(cases.length).toBe(12);
  });

  it('every record of every honest chain verifies from block 0 alone', { timeout: 300_000 }, () => {
    for (const { seed, chains } of cases) expect(checkEvidence(chains), `seed ${seed}`).toEqual([]);
  });

  it('dropping or altering any part of it is refused (positive control: the untouched evidence verifies)', {
    timeout: 300_000,
  }, () => {
    let tried = 0;
    for (const { seed, chains } of cases) {
      const rng = new Prng(seed);
      const chain = [...chains.values()][0] as readonly Block[];
      const genesis = chain[0] as Block;
      // Records above the last membership block (the longest evidence) and a few chosen at random.
      const withRecords = chain.filter((b) => b.header.height > 0 && b.records.length > 0);
      const picks = [withRecords.at(-1), rng.pick(withRecords), rng.pick(withRecords)].filter(Boolean) as Block[];
      for (const block of picks) {
        const index = rng.int(0, block.records.length - 1);
        const real = evidenceFrom(chain, block.header.height, index) as LightEvidence;
        expect(verifyLightEvidence(real, genesis).ok, `seed ${seed}: the real evidence`).toBe(true);
        for (const [name, change] of mutations(real)) {
          const forged = structuredClone(real);
          change(forged);
          if (JSON.stringify(forged) === JSON.stringify(real)) continue; // a mutation with nothing to change here
          const report = verifyLightEvidence(forged, genesis);
          expect(report.ok, `seed ${seed}, block ${block.header.height}/${index}: ${name} was accepted`).toBe(false);
          tried++;
        }
      }
    }
    expect(tried).toBeGreaterThan(500);
  });
});
