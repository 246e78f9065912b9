import type { CommitMessage } from '@scriptorium/ledger-protocol';
import { sealBytes } from '@scriptorium/ledger-protocol';
import { fail, OK, type ValidationContext, type Verdict } from './context.ts';

/** A COMMIT's content: a valid commit seal over (chain, height, round, block hash). */
export function validateCommit(v: ValidationContext, msg: CommitMessage): Verdict {
  if (msg.type !== 'COMMIT') return fail('not a COMMIT');
  if (!v.verify(msg.author, sealBytes(msg.chain_id, msg.height, msg.round, msg.block_hash), msg.seal)) {
    return fail('bad commit seal');
  }
  return OK;
}
