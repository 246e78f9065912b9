import type { PrepareMessage } from '@scriptorium/ledger-protocol';
import { checkCarried, fail, OK, type ValidationContext, type Verdict } from './context.ts';

/**
 * A prepared certificate: a quorum of valid PREPAREs from distinct active validators for exactly
 * (height, round, blockHash).
 */
export function validatePreparedCertificate(
  v: ValidationContext,
  prepares: readonly PrepareMessage[],
  round: number,
  blockHash: string,
): Verdict {
  const authors = new Set<string>();
  for (const p of prepares) {
    if (p.round !== round) return fail('prepared certificate: PREPARE of another round');
    if (p.block_hash !== blockHash) return fail('prepared certificate: PREPARE for another block');
    if (authors.has(p.author)) return fail('prepared certificate: duplicate author');
    const e = p.type === 'PREPARE' ? checkCarried(v, p) : fail('not a PREPARE');
    if (!e.ok) return fail(`prepared certificate: ${e.reason}`);
    authors.add(p.author);
  }
  if (authors.size < v.quorum) return fail(`prepared certificate: ${authors.size} PREPAREs, quorum is ${v.quorum}`);
  return OK;
}
