import type { PrePrepareMessage, RoundChangeCore } from '@scriptorium/ledger-protocol';
import { proposerFor } from '../proposer.ts';
import { checkProposedBlock } from './block.ts';
import { fail, OK, type ValidationContext, type Verdict } from './context.ts';
import { validatePreparedCertificate } from './prepare.ts';
import { validateRoundChangeCore } from './round-change.ts';

/** The round change in a set with the highest prepared round, or null when none is prepared. */
export function highestPrepared<T extends RoundChangeCore>(roundChanges: readonly T[]): T | null {
  let best: T | null = null;
  for (const rc of roundChanges) {
    if (rc.prepared_round !== null && (best === null || rc.prepared_round > (best.prepared_round as number))) best = rc;
  }
  return best;
}

/**
 * A PRE-PREPARE: from the proposer of its round, for a well-formed block of this height. For round 0
 * the block must be the author's own. For round > 0 the round-change certificate must hold a quorum of
 * valid ROUND_CHANGEs for this round; if any is prepared, the block must be the one with the highest
 * prepared round, backed by a valid prepared certificate; if none is, any block of the author's.
 */
export function validatePrePrepare(v: ValidationContext, msg: PrePrepareMessage): Verdict {
  if (msg.type !== 'PRE-PREPARE') return fail('not a PRE-PREPARE');
  if (msg.author !== proposerFor(v.ctx, msg.round))
    return fail('PRE-PREPARE from a validator that is not the proposer');
  if (msg.round === 0) {
    const block = checkProposedBlock(v, msg.block, msg.block_hash);
    if (!block.ok) return block;
    if (msg.block.header.proposer !== msg.author) return fail('block proposer is not the message author');
    return OK;
  }
  const cert = msg.justification;
  if (cert === undefined) return fail('PRE-PREPARE for round > 0 without a round-change certificate');
  const authors = new Set<string>();
  for (const rc of cert.round_changes) {
    if (rc.round !== msg.round) return fail('round-change certificate: ROUND_CHANGE for another round');
    if (authors.has(rc.author)) return fail('round-change certificate: duplicate author');
    const r = validateRoundChangeCore(v, rc);
    if (!r.ok) return fail(`round-change certificate: ${r.reason}`);
    authors.add(rc.author);
  }
  if (authors.size < v.quorum)
    return fail(`round-change certificate: ${authors.size} ROUND_CHANGEs, quorum is ${v.quorum}`);
  const highest = highestPrepared(cert.round_changes);
  // A new block gets the application check; a re-proposed prepared block only the structural one.
  const block = checkProposedBlock(v, msg.block, msg.block_hash, highest === null);
  if (!block.ok) return block;
  if (highest === null) {
    if (msg.block.header.proposer !== msg.author) return fail('new block proposer is not the message author');
    if (cert.prepares.length > 0) return fail('prepared certificate without a prepared ROUND_CHANGE');
    return OK;
  }
  if (msg.block_hash !== highest.prepared_hash) {
    return fail('re-proposal is not the block of the highest prepared round');
  }
  return validatePreparedCertificate(v, cert.prepares, highest.prepared_round as number, highest.prepared_hash);
}
