import type { Block, Verify } from '@scriptorium/ledger-protocol';
import { blockHash, createValidatorTimeline, verifyFinality, verifySignature } from '@scriptorium/ledger-protocol';

/**
 * Seals: every finalized block (height ≥ 1) carries a quorum of valid commit seals from the set active
 * at its height, computed independently from genesis along that chain. Each distinct block is checked once.
 * `verify` is Ed25519 itself or a memo of it (the run's signature cache: the same verdicts, each signature checked
 * once in the run).
 */
export function checkSeals(chains: ReadonlyMap<string, readonly Block[]>, verify: Verify = verifySignature): string[] {
  const errors: string[] = [];
  const checked = new Set<string>();
  for (const [node, chain] of chains) {
    const genesis = chain[0];
    if (genesis === undefined) continue;
    const timeline = createValidatorTimeline(genesis);
    for (let h = 1; h < chain.length; h++) {
      const block = chain[h] as Block;
      const key = `${blockHash(block.header)}:${blockHash((chain[h - 1] as Block).header)}`;
      if (!checked.has(key)) {
        checked.add(key);
        const r = verifyFinality(block, timeline.at(h), verify);
        if (!r.ok) errors.push(`${node}: block ${h} lacks a valid finality certificate: ${r.reason}`);
      }
      timeline.append(block);
    }
  }
  return errors;
}
