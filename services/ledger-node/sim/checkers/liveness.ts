import type { Block } from '@scriptorium/ledger-protocol';
import { blockHash } from '@scriptorium/ledger-protocol';

/**
 * Liveness after healing: every honest node reached `target` height and all agree on the block at
 * the lowest tip among them (they converged).
 */
export function checkLiveness(chains: ReadonlyMap<string, readonly Block[]>, target: number): string[] {
  const errors: string[] = [];
  let lowest = Number.POSITIVE_INFINITY;
  for (const [node, chain] of chains) {
    const tip = chain.length - 1;
    lowest = Math.min(lowest, tip);
    if (tip < target) errors.push(`${node} stuck at height ${tip}, target ${target}`);
  }
  if (errors.length > 0 || !Number.isFinite(lowest)) return errors;
  const hashes = new Set([...chains.values()].map((c) => blockHash((c[lowest] as Block).header)));
  if (hashes.size !== 1) errors.push(`nodes did not converge at height ${lowest}`);
  return errors;
}
