// The shared test vectors (ledger-vectors.json): current with their generator, and every verdict they claim is the
// verdict of verifyEvidence — with node:crypto and with @noble (the browser's crypto). `ledger-node verify-proof`
// and the browser console are tested on the same file.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Block, finalityReport, nobleSha256, nobleVerify, verifyChain, verifyEvidence } from '../index.ts';
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
    expect(verifyEvidence(v.proof, nobleVerify, nobleSha256).ok).toBe(v.valid);
    // With the chain below and including its block: the same verdict.
    const withChain = verifyEvidence({ proof: v.proof, chain: vectors.chain.slice(0, v.proof.height + 1) });
    expect(withChain.ok, withChain.lines.join('; ')).toBe(v.valid);
  });

  it.each(vectors.finality.map((v) => [v.name, v] as const))('finality: %s', (_name, v) => {
    const evidence = [...vectors.chain.slice(0, v.height), v.block];
    const report = verifyEvidence(evidence);
    expect(report.ok, report.lines.join('; ')).toBe(v.valid);
    expect(verifyEvidence(evidence, nobleVerify, nobleSha256).ok).toBe(v.valid);
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
    ])
      expect(verifyEvidence(input).ok).toBe(false);
  });
});
