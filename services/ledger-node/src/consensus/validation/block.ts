import type { Block } from '@scriptorium/ledger-protocol';
import { blockHash, checkBody } from '@scriptorium/ledger-protocol';
import { fail, OK, type ValidationContext, type Verdict } from './context.ts';

/**
 * A proposed block fits the height: chain, height, parent, no seals, body matches header; and, for a
 * new block (`appCheck`), the application check. A prepared block (backed by a quorum's prepared
 * certificate) skips the application check: a local policy must not refuse a value the protocol may
 * have to re-propose.
 */
export function checkProposedBlock(v: ValidationContext, block: Block, expectedHash: string, appCheck = true): Verdict {
  const h = block.header;
  if (h.chain_id !== v.chainId) return fail('block: wrong chain id');
  if (h.height !== v.ctx.height) return fail('block: wrong height');
  if (h.parent_hash !== v.ctx.parentHash) return fail('block: wrong parent hash');
  if (h.prev_membership_height !== v.ctx.prevMembershipHeight) return fail('block: wrong prev_membership_height');
  if (block.commit_signatures.length !== 0) return fail('block: a proposal carries no seals');
  if (blockHash(h) !== expectedHash) return fail('block: hash mismatch');
  const body = checkBody(block);
  if (!body.ok) return fail(`block: ${body.reason}`);
  const app = appCheck ? (v.checkProposal?.(block) ?? null) : null;
  if (app !== null) return fail(`block: ${app}`);
  return OK;
}
