import type { Block, ConsensusMessage, Verify } from '@scriptorium/ledger-protocol';
import { messageSigningBytes } from '@scriptorium/ledger-protocol';
import type { HeightContext } from '../types.ts';

/**
 * Everything a validator needs to judge a message's content at the open height. The message itself already
 * passed the gate (gate.ts: chain id, height, round, sender, signature); messages it carries inside a
 * certificate did not, and get `checkCarried`.
 */
export interface ValidationContext {
  chainId: string;
  ctx: HeightContext;
  members: ReadonlySet<string>;
  quorum: number;
  verify: Verify;
  checkProposal?: ((block: Block) => string | null) | undefined;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

export const OK: Verdict = { ok: true };
export const fail = (reason: string): Verdict => ({ ok: false, reason });

/** A message carried in a certificate: chain, height, membership of the author and its signature. */
export function checkCarried(v: ValidationContext, msg: ConsensusMessage): Verdict {
  if (msg.chain_id !== v.chainId) return fail('wrong chain id');
  if (msg.height !== v.ctx.height) return fail(`wrong height ${msg.height}, expected ${v.ctx.height}`);
  if (!v.members.has(msg.author)) return fail('author is not an active validator');
  if (!v.verify(msg.author, messageSigningBytes(msg), msg.signature)) return fail('bad signature');
  return OK;
}
