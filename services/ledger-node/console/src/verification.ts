// The page's own verification of the serving node's chain: block 0 taken as served (its hash is shown, to compare
// with the cluster's genesis), every later block checked in order — link, body, finality certificate from the set
// its predecessors make active — with @scriptorium/ledger-protocol's ChainVerifier, on @noble in the browser.
// Verified blocks are remembered, so each is checked once per page.
import {
  type Block,
  blockHash,
  ChainVerifier,
  type FinalityReport,
  type MerkleProofBody,
  verifyProof,
} from '@scriptorium/ledger-protocol';
import { blockAt } from './api.ts';

let verifier: ChainVerifier | undefined;
let failure: { height: number; reason: string } | undefined;

/** Told how far a verification got: blocks checked of blocks to check. */
export type Progress = (done: number, total: number) => void;

/** The serving node's block 0 hash, once read. */
export const genesisHash = (): string | undefined => verifier?.genesisHash;

/**
 * Verifies the serving node's blocks 1..height in order (fetching what is not cached) and returns the verifier;
 * its `activeSetAt(height + 1)` is the set the chain's own changes make active. Throws when a block does not verify.
 */
export async function verifiedUpTo(height: number, progress?: Progress): Promise<ChainVerifier> {
  if (failure && failure.height <= height) throw new Error(`block ${failure.height}: ${failure.reason}`);
  verifier ??= new ChainVerifier(await blockAt(0));
  const v = verifier;
  const start = v.height;
  while (v.height < height) {
    const step = v.add(await blockAt(v.height + 1));
    if (!step.ok) {
      failure = { height: step.height, reason: step.reason };
      throw new Error(`block ${step.height}: ${step.reason}`);
    }
    if ((v.height - start) % 8 === 0 || v.height === height) progress?.(v.height - start, height - start);
  }
  return v;
}

export interface BlockVerdict {
  ok: boolean;
  /** What failed (or, when ok, a summary). */
  reason: string;
  height: number;
  finality?: FinalityReport;
}

/**
 * A block of height h — the node's own, or one pasted or edited by the reader — judged against the serving node's
 * verified chain 0..h−1: its link to block h−1, its body, and its finality certificate seal by seal.
 */
export async function judgeBlock(block: Block, progress?: Progress): Promise<BlockVerdict> {
  const h = block.header.height;
  if (h === 0) return { ok: false, height: 0, reason: 'block 0 has no certificate: compare its hash with the genesis' };
  let v: ChainVerifier;
  try {
    v = await verifiedUpTo(h - 1, progress);
  } catch (err) {
    return { ok: false, height: h, reason: `the chain below it does not verify: ${(err as Error).message}` };
  }
  const verdict = v.check(block);
  if (!verdict.ok)
    return {
      ok: false,
      height: h,
      reason: verdict.reason,
      ...(verdict.finality ? { finality: verdict.finality } : {}),
    };
  const f = verdict.finality as FinalityReport;
  return {
    ok: true,
    height: h,
    reason: `final: ${f.validSeals} valid seals of round ${f.round} from the ${f.validators} validators active at height ${h} (quorum ${f.quorum})`,
    finality: f,
  };
}

/** A record's proof checked up to its block's merkle_root and hash, and that block's certificate from block 0. */
export async function judgeProof(proof: MerkleProofBody, progress?: Progress): Promise<BlockVerdict> {
  const block = await blockAt(proof.height);
  const hash = blockHash(block.header);
  if (hash !== proof.block_hash)
    return {
      ok: false,
      height: proof.height,
      reason: `block ${proof.height} hashes to ${hash}, the proof names another`,
    };
  if (!verifyProof({ ...proof, header: block.header, block_hash: hash }))
    return {
      ok: false,
      height: proof.height,
      reason: `the record does not hash up to block ${proof.height}'s merkle_root`,
    };
  const final = await judgeBlock(block, progress);
  if (!final.ok) return { ...final, reason: `the record proves against block ${proof.height}, but ${final.reason}` };
  return {
    ...final,
    reason: `the record hashes up to merkle_root ${proof.merkle_root.slice(0, 16)}… in ${proof.proof.length} steps; block ${proof.height} is ${final.reason}`,
  };
}
