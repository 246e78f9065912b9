import type { Block } from '@scriptorium/ledger-protocol';
import { blockHash, checkLink } from '@scriptorium/ledger-protocol';

/**
 * Safety: no two different blocks finalized at one height on any honest node, and every chain links
 * (each block's parent is the previous block's hash). Returns the violations found.
 */
export function checkSafety(chains: ReadonlyMap<string, readonly Block[]>): string[] {
  const errors: string[] = [];
  const byHeight = new Map<number, { hash: string; node: string }>();
  for (const [node, chain] of chains) {
    for (let h = 0; h < chain.length; h++) {
      const block = chain[h] as Block;
      if (block.header.height !== h) errors.push(`${node}: block at index ${h} has height ${block.header.height}`);
      if (h > 0) {
        const link = checkLink(chain[h - 1] as Block, block);
        if (!link.ok) errors.push(`${node}: height ${h}: ${link.reason}`);
      }
      const hash = blockHash(block.header);
      const seen = byHeight.get(h);
      if (seen === undefined) byHeight.set(h, { hash, node });
      else if (seen.hash !== hash) {
        errors.push(
          `fork at height ${h}: ${seen.node} has ${seen.hash.slice(0, 12)}, ${node} has ${hash.slice(0, 12)}`,
        );
      }
    }
  }
  return errors;
}
