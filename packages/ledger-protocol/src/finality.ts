import { verifySignature } from '#platform-crypto';
import { blockHash } from './block.ts';
import type { Sha256 } from './merkle.ts';
import type { Block } from './schemas.ts';
import { sealBytes } from './signing.ts';
import { quorumSize } from './validators.ts';

/** Ed25519 signature check: true when `signatureHex` is `publicKeyHex`'s signature of `message`. */
export type Verify = (publicKeyHex: string, message: Uint8Array, signatureHex: string) => boolean;

export type FinalityCheck = { ok: true; round: number } | { ok: false; reason: string };

/**
 * Verifies a block's finality certificate against the set active at the block's height: every seal
 * is from a distinct active validator, of one round, and valid; and there are at least a quorum.
 * @example verifyFinality(block, timeline.at(block.header.height))
 */
export function verifyFinality(
  block: Block,
  activeSet: readonly string[],
  verify: Verify = verifySignature,
  sha?: Sha256,
): FinalityCheck {
  const seals = block.commit_signatures;
  if (seals.length === 0) return { ok: false, reason: 'no commit seals' };
  const members = new Set(activeSet);
  const round = (seals[0] as (typeof seals)[0]).round;
  const seen = new Set<string>();
  const hash = blockHash(block.header, sha);
  const bytes = sealBytes(block.header.chain_id, block.header.height, round, hash);
  for (const seal of seals) {
    if (seal.round !== round) return { ok: false, reason: 'seals of different rounds' };
    if (!members.has(seal.validator)) return { ok: false, reason: 'seal from a non-validator' };
    if (seen.has(seal.validator)) return { ok: false, reason: 'duplicate seal' };
    seen.add(seal.validator);
    if (!verify(seal.validator, bytes, seal.signature)) return { ok: false, reason: 'invalid seal signature' };
  }
  const need = quorumSize(members.size);
  if (seen.size < need) return { ok: false, reason: `${seen.size} seals, quorum is ${need}` };
  return { ok: true, round };
}
