// The shared test vectors (ledger-vectors.json): current with their generator, and every verdict they claim is the
// verdict of verifyEvidence — with node:crypto and with @noble (the browser's crypto). `ledger-node verify-proof`
// and the browser console are tested on the same file.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type Block,
  finalityReport,
  nobleSha256,
  nobleVerify,
  verifyChain,
  verifyEvidence,
  verifyLightEvidence,
  type WitnessRequirement,
  witnessPolicy,
} from '../index.ts';
import { VECTORS_FILE, vectorsJson } from './generate.ts';

const vectors = JSON.parse(readFileSync(VECTORS_FILE, 'utf8')) as ReturnType<
  typeof import('./generate.ts').buildVectors
>;

describe('shared test vectors', () => {
  it('the file is what the generator writes (regenerate with node packages/ledger-protocol/src/vectors/generate.ts)', () => {
    expect(readFileSync(VECTORS_FILE, 'utf8')).toBe(vectorsJson());
  });

  it('the chain verifies from block 0, with node:crypto and with @noble', () => {
    expect(verifyChain(vectors.chain)).toEqual({ ok: true });
    expect(verifyChain(vectors.chain, nobleVerify, nobleSha256)).toEqual({ ok: true });
  });

  it.each(vectors.proofs.map((v) => [v.name, v] as const))('proof: %s', (_name, v) => {
    expect(verifyEvidence(v.proof).ok).toBe(v.valid);
    expect(verifyEvidence(v.proof, { verify: nobleVerify, sha: nobleSha256 }).ok).toBe(v.valid);
    // With the chain below and including its block: the same verdict.
    const withChain = verifyEvidence({ proof: v.proof, chain: vectors.chain.slice(0, v.proof.height + 1) });
    expect(withChain.ok, withChain.lines.join('; ')).toBe(v.valid);
  });

  it.each(vectors.finality.map((v) => [v.name, v] as const))('finality: %s', (_name, v) => {
    const evidence = [...vectors.chain.slice(0, v.height), v.block];
    const report = verifyEvidence(evidence);
    expect(report.ok, report.lines.join('; ')).toBe(v.valid);
    expect(verifyEvidence(evidence, { verify: nobleVerify, sha: nobleSha256 }).ok).toBe(v.valid);
    expect(report.genesisHash).toBe(vectors.genesis_hash);
  });

  it('the finality report names what is wrong with each seal', () => {
    const [genesis, , b2] = vectors.chain as [Block, Block, Block];
    const set5 = [...genesis.validator_changes.map((c) => c.validator), b2.validator_changes[0]?.validator as string];
    const byName = Object.fromEntries(vectors.finality.map((v) => [v.name, v.block as Block]));
    const removed = finalityReport(byName['block 3 with a seal removed (3 of 5, below quorum 4)'] as Block, set5);
    expect(removed).toMatchObject({
      ok: false,
      validators: 5,
      quorum: 4,
      validSeals: 3,
      reason: '3 valid seals, quorum is 4',
    });
    const outsider = finalityReport(byName['block 3 with a seal from a key that never was a validator'] as Block, set5);
    expect(outsider.seals.map((s) => s.status).sort()).toEqual(['not an active validator', 'valid', 'valid', 'valid']);
    const twice = finalityReport(byName['block 3 with a seal copied twice'] as Block, set5);
    expect(twice.seals.map((s) => s.status)).toContain('duplicate');
    const edited = finalityReport(
      byName['block 3 with one header field changed (every seal signs the old hash)'] as Block,
      set5,
    );
    expect(new Set(edited.seals.map((s) => s.status))).toEqual(new Set(['bad signature']));
  });

  const genesis = vectors.chain[0] as Block;

  it.each(vectors.light.map((v) => [v.name, v] as const))('light evidence: %s', (_name, v) => {
    for (const report of [
      verifyLightEvidence(v.evidence, genesis),
      verifyLightEvidence(v.evidence, genesis, nobleVerify, nobleSha256),
      verifyEvidence(v.evidence, { genesis }),
    ]) {
      expect(report.ok, report.lines.join('; ')).toBe(v.valid);
      expect(report.genesisHash).toBe(vectors.genesis_hash);
      if (v.refusal) expect(report.lines.at(-1)).toContain(v.refusal);
    }
    // A verifier that takes the served block 0 as the genesis it pins is what the forged body is for: the body does
    // not match the real header, so that block 0 is refused before any evidence is read.
    if (v.served_genesis) {
      const served = verifyLightEvidence(v.evidence, v.served_genesis as Block);
      expect(served.ok).toBe(false);
      expect(served.lines.at(-1)).toContain('merkle_root mismatch');
    }
  });

  it('light evidence needs a pinned genesis; a chain must start with the pinned one', () => {
    const valid = vectors.light.find((v) => v.valid) as (typeof vectors.light)[0];
    expect(verifyEvidence(valid.evidence).lines.at(-1)).toMatch(/pinned genesis/);
    const attacker = vectors.light.find((v) => v.served_genesis) as (typeof vectors.light)[0];
    const swapped = [attacker.served_genesis as Block, ...vectors.chain.slice(1)];
    expect(verifyEvidence(swapped).ok).toBe(false);
    expect(verifyEvidence(vectors.chain, { genesis }).ok).toBe(true);
    const otherGenesis = { ...genesis, header: { ...genesis.header, timestamp: 1 } };
    expect(verifyEvidence(vectors.chain, { genesis: otherGenesis }).lines.at(-1)).toMatch(/pinned genesis/);
  });

  const policy = witnessPolicy(vectors.witness_policy.witnesses, vectors.witness_policy.threshold);
  if (typeof policy === 'string') throw new Error(policy);
  const requirement: WitnessRequirement = { policy };

  it.each(vectors.witnessed.map((v) => [v.name, v] as const))('witnessed evidence: %s', (_name, v) => {
    for (const report of [
      verifyLightEvidence(v.evidence, genesis, undefined, undefined, requirement),
      verifyLightEvidence(v.evidence, genesis, nobleVerify, nobleSha256, requirement),
      verifyEvidence(v.evidence, { genesis, witnesses: requirement }),
    ]) {
      expect(report.ok, report.lines.join('; ')).toBe(v.valid);
      if (v.refusal) expect(report.lines.at(-1)).toContain(v.refusal);
      if (v.valid) expect(report.checkpoint?.cosigned?.map((c) => c.witness)).toEqual(['w1', 'w2']);
    }
    const unpolicied = verifyEvidence(v.evidence, { genesis });
    expect(unpolicied.ok, unpolicied.lines.join('; ')).toBe(v.valid_without_policy);
  });

  it('a witness policy refuses a proof or a chain alone, and policies are checked when they are made', () => {
    expect(verifyEvidence(vectors.chain, { genesis, witnesses: requirement }).lines.at(-1)).toMatch(/only by light/);
    const [w1, w2] = vectors.witness_policy.witnesses as [{ name: string; key: string }, { name: string; key: string }];
    expect(witnessPolicy([w1, w2], 3)).toMatch(/want 1 to 2/);
    expect(witnessPolicy([w1, { ...w2, name: 'w1' }])).toMatch(/named twice/);
    expect(witnessPolicy([w1, { ...w2, key: w1.key }])).toMatch(/key of another/);
    expect(witnessPolicy([{ name: 'w1', key: w1.key.replace(/\+[0-9a-f]{8}\+/, '+00000000+') }])).toMatch(/key id/);
    expect(witnessPolicy([])).toMatch(/at least one/);
    // A 1-of-2 policy accepts what one of them cosigned.
    const one = witnessPolicy([w1, w2], 1);
    if (typeof one === 'string') throw new Error(one);
    const w1Only = vectors.witnessed.find((v) => v.name === 'cosigned by w1 only');
    expect(verifyEvidence(w1Only?.evidence, { genesis, witnesses: { policy: one } }).ok).toBe(true);
  });

  it('unreadable evidence is a failed report, never an exception', () => {
    for (const input of [
      null,
      5,
      'x',
      [],
      [{}],
      { chain: 'x' },
      { proof: {} },
      { proof: vectors.proofs[0]?.proof, chain: [] },
      { format: 'scriptorium-ledger-evidence/1' },
      { ...vectors.light[0]?.evidence, membership: 'x' },
      { ...vectors.light[0]?.evidence, block: null },
    ]) {
      expect(verifyEvidence(input).ok).toBe(false);
      expect(verifyEvidence(input, { genesis }).ok).toBe(false);
    }
  });
});
