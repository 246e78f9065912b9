import type { Block } from '@scriptorium/ledger-protocol';
import { blockHash, proofFor, verifyProof } from '@scriptorium/ledger-protocol';

/**
 * Proofs: every record and validator change of every distinct finalized block proves against the block's
 * merkle_root with the GET /proof body the node would serve, the leaf being the item's canonical form.
 */
export function checkProofs(chains: ReadonlyMap<string, readonly Block[]>): string[] {
  const errors: string[] = [];
  const checked = new Set<string>();
  for (const [node, chain] of chains) {
    for (const block of chain) {
      const hash = blockHash(block.header);
      if (checked.has(hash)) continue;
      checked.add(hash);
      const items = [
        ...block.records.map((_, i) => proofFor(block, i)),
        ...block.validator_changes.map((_, i) => proofFor(block, i, 'validator_change')),
      ];
      for (const p of items) {
        if (p === null || !verifyProof({ ...p, header: block.header, block_hash: hash }))
          errors.push(`${node}: block ${block.header.height} has an item whose proof does not verify`);
      }
    }
  }
  return errors;
}
