/**
 * Judging a block's finality certificate (its commit seals) against the validator set active at its height: the
 * one rule every verifier and the node itself apply.
 */
import { verifySignature } from '#platform-crypto';
import { blockHash } from './block.ts';
import type { Sha256 } from './merkle.ts';
import type { Block } from './schemas.ts';
import { sealBytes } from './signing.ts';
import { quorumSize } from './validators.ts';

/** Ed25519 signature check: true when `signatureHex` is `publicKeyHex`'s signature of `message`. */
export type Verify = (publicKeyHex: string, message: Uint8Array, signatureHex: string) => boolean;

/** What one commit seal of a certificate is worth. */
export type SealStatus = 'valid' | 'bad signature' | 'not an active validator' | 'duplicate' | 'other round';

export interface FinalityReport {
  ok: boolean;
  /** Why the certificate does not hold (the first reason), when it does not. */
  reason?: string;
  /** The round the seals are of (the first seal's). */
  round: number | null;
  /** Size of the active set and its quorum, N − floor((N − 1) / 3). */
  validators: number;
  quorum: number;
  /** Distinct valid seals from active validators. */
  validSeals: number;
  seals: Array<{ validator: string; round: number; status: SealStatus }>;
}

/**
 * Every seal of a block's finality certificate judged against `activeSet`: a certificate holds when all its seals
 * are valid, of one round, from distinct active validators, and they are at least a quorum. Same verdict as
 * `verifyFinality`, with the detail a person reading it needs.
 * @example finalityReport(block, verifier.activeSetAt(block.header.height)).validSeals
 */
export function finalityReport(
  block: Pick<Block, 'header' | 'commit_signatures'>,
  activeSet: readonly string[],
  verify: Verify = verifySignature,
  sha?: Sha256,
): FinalityReport {
  const members = new Set(activeSet);
  const quorum = quorumSize(members.size);
  const first = block.commit_signatures[0];
  const round = first?.round ?? null;
  const hash = blockHash(block.header, sha);
  // Every seal counted is of the first seal's round, so all of them sign the same bytes.
  const bytes = round === null ? null : sealBytes(block.header.chain_id, block.header.height, round, hash);
  const seen = new Set<string>();
  let reason: string | undefined;
  const seals = block.commit_signatures.map((seal) => {
    let status: SealStatus = 'valid';
    if (seal.round !== round) status = 'other round';
    else if (!members.has(seal.validator)) status = 'not an active validator';
    else if (seen.has(seal.validator)) status = 'duplicate';
    else if (!verify(seal.validator, bytes as Uint8Array, seal.signature)) status = 'bad signature';
    if (status === 'valid') seen.add(seal.validator);
    else reason ??= `a seal: ${status}`;
    return { validator: seal.validator, round: seal.round, status };
  });
  if (seals.length === 0) reason = 'no commit seals';
  else if (reason === undefined && seen.size < quorum) reason = `${seen.size} valid seals, quorum is ${quorum}`;
  return {
    ok: reason === undefined,
    ...(reason !== undefined ? { reason } : {}),
    round,
    validators: members.size,
    quorum,
    validSeals: seen.size,
    seals,
  };
}

export type FinalityCheck = { ok: true; round: number } | { ok: false; reason: string };

/**
 * Verifies a block's finality certificate against the set active at the block's height: every seal
 * is from a distinct active validator, of one round, and valid; and there are at least a quorum.
 * The verdict of `finalityReport`, without the seal-by-seal detail.
 * @example verifyFinality(block, timeline.at(block.header.height))
 */
export function verifyFinality(
  block: Pick<Block, 'header' | 'commit_signatures'>,
  activeSet: readonly string[],
  verify: Verify = verifySignature,
  sha?: Sha256,
): FinalityCheck {
  const report = finalityReport(block, activeSet, verify, sha);
  return report.ok ? { ok: true, round: report.round as number } : { ok: false, reason: report.reason as string };
}
