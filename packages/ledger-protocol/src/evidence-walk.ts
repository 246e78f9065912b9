/**
 * What both light verifiers (a record's evidence, a checkpoint's last block) share: the sealed-header and
 * membership-block shapes, and the walk from a pinned genesis up the membership blocks below a block to the set
 * active at it, then that block's certificate against the set. Browser-safe.
 */
import * as z from 'zod';
import { blockHash, checkGenesis, proofShape } from './block.ts';
import { ProofStepSchema } from './bodies.ts';
import { type FinalityReport, finalityReport, type Verify } from './finality.ts';
import type { Sha256 } from './merkle.ts';
import { verifyProof } from './proof.ts';
import { type Block, BlockHeader, CommitSignature, MAX_CHANGES_PER_BLOCK, ValidatorChange } from './schemas.ts';
import { applyChanges } from './validators.ts';

/** A header with its finality certificate: all a light client needs of a block besides proven items. */
export const SealedHeader = z.strictObject({
  header: BlockHeader,
  commit_signatures: z.array(CommitSignature).max(1024),
});
export type SealedHeader = z.infer<typeof SealedHeader>;

/** A block that carried validator changes: its sealed header and each change with its proof to `merkle_root`. */
export const MembershipEvidence = z.strictObject({
  header: BlockHeader,
  commit_signatures: z.array(CommitSignature).max(1024),
  validator_changes: z
    .array(z.strictObject({ change: ValidatorChange, proof: z.array(ProofStepSchema).max(64) }))
    .max(MAX_CHANGES_PER_BLOCK),
});
export type MembershipEvidence = z.infer<typeof MembershipEvidence>;

/** A verifier's verdict, the same shape from every form of evidence. */
export interface EvidenceReport {
  ok: boolean;
  /** What was checked, one line each, in order; the failing check last. */
  lines: string[];
  /** Hash of block 0: the pinned genesis, or the chain's as given. */
  genesisHash?: string;
  /** The certificate of the last block judged, seal by seal, once it was reached. */
  finality?: FinalityReport & { height: number };
  /** The checkpoint the evidence carried, as judged (light evidence with a checkpoint). */
  checkpoint?: CheckpointVerdict;
}

/** A checkpoint as a verifier judged it. */
export interface CheckpointVerdict {
  origin: string;
  size: number;
  /** Root, hex. */
  root: string;
  /** Validators whose log signature is valid, and the quorum of the set active at the checkpoint's last block. */
  signers: number;
  quorum: number;
  /** With a witness policy: the trusted witnesses that cosigned, with their cosignature's time (seconds). */
  cosigned?: Array<{ witness: string; time: number }>;
}

/** The first 12 hex characters of a hash or key, for report lines. */
export const short = (hex: string): string => `${hex.slice(0, 12)}…`;

/** Checks shared by both light verifiers: the pinned genesis, then the membership blocks below `target`. */
export function walkMembership(
  genesis: Block,
  membership: readonly MembershipEvidence[],
  target: BlockHeader,
  report: EvidenceReport,
  verify: Verify,
  sha: Sha256 | undefined,
): readonly string[] | null {
  const { lines } = report;
  const chainId = genesis.header.chain_id;
  let active = applyChanges([], genesis.validator_changes).validators;
  lines.push(`block 0 (the genesis given): chain ${chainId}, hash ${report.genesisHash}, ${active.length} validators`);
  const T = target.height;
  const refuse = (line: string) => {
    lines.push(line);
    return null;
  };
  let previous = 0;
  for (const m of membership) {
    const h = m.header.height;
    const where = `membership block ${h}`;
    if (m.header.chain_id !== chainId) return refuse(`${where}: chain ${m.header.chain_id}, not ${chainId}`);
    if (h <= previous) return refuse(`${where}: out of order (after membership block ${previous})`);
    if (h >= T) return refuse(`${where}: not below block ${T}`);
    if (m.header.prev_membership_height !== previous)
      return refuse(
        `${where} names ${m.header.prev_membership_height} as the membership block before it, the evidence gives ${previous}: one is missing, added or out of order`,
      );
    if (m.header.change_count === 0) return refuse(`${where}: its header says it carries no validator changes`);
    if (m.validator_changes.length !== m.header.change_count)
      return refuse(
        `${where}: its header counts ${m.header.change_count} changes, the evidence gives ${m.validator_changes.length}`,
      );
    for (const [j, { change, proof }] of m.validator_changes.entries()) {
      if (!sameShape(proof, proofShape(m.header, 'validator_change', j)))
        return refuse(`${where}: change ${j}'s proof is not the path of change ${j} of ${m.header.change_count}`);
      if (!verifyProof({ record: change, proof, merkle_root: m.header.merkle_root, ...(sha ? { sha256: sha } : {}) }))
        return refuse(
          `${where}: change ${j} (${change.action} ${short(change.validator)}) does not hash up to its merkle_root`,
        );
    }
    const finality = finalityReport(m, active, verify, sha);
    if (!finality.ok)
      return refuse(
        `${where}: finality certificate against the ${active.length} validators active there: ${finality.reason}`,
      );
    const changes = m.validator_changes.map((c) => c.change);
    active = applyChanges(active, changes).validators;
    lines.push(
      `${where}: ${changes.map((c) => `${c.action} ${short(c.validator)}`).join(', ')}; final by ${finality.validSeals} of ${finality.validators} (quorum ${finality.quorum}); ${active.length} validators from ${h + 1}`,
    );
    previous = h;
  }
  if (target.chain_id !== chainId) return refuse(`block ${T}: chain ${target.chain_id}, not ${chainId}`);
  if (T < 1) return refuse('block 0 is the genesis: it has no certificate');
  if (target.prev_membership_height !== previous)
    return refuse(
      `block ${T} names ${target.prev_membership_height} as the last membership block before it, the evidence's last is ${previous}: one is missing, added or out of order`,
    );
  return active;
}

/** The sealed block's certificate against the set the membership walk left; sets `report.finality`. */
export function judgeFinality(
  sealed: SealedHeader,
  active: readonly string[],
  report: EvidenceReport,
  verify: Verify,
  sha: Sha256 | undefined,
): boolean {
  const T = sealed.header.height;
  const finality = finalityReport(sealed, active, verify, sha);
  report.finality = { ...finality, height: T };
  if (!finality.ok) {
    report.lines.push(
      `block ${T}: finality certificate against the ${active.length} validators active there: ${finality.reason}`,
    );
    return false;
  }
  report.lines.push(
    `block ${T} (hash ${short(blockHash(sealed.header, sha))}): final by ${finality.validSeals} valid seals of round ${finality.round} from the ${finality.validators} validators active there (quorum ${finality.quorum})`,
  );
  return true;
}

/** A report that has checked the pinned genesis: `genesisHash` is set only when it is a valid block 0. */
export function startReport(genesis: Block, sha: Sha256 | undefined): EvidenceReport {
  const report: EvidenceReport = { ok: false, lines: [] };
  const g = checkGenesis(genesis, sha);
  if (!g.ok) report.lines.push(`the pinned genesis is not a valid block 0: ${g.reason}`);
  else report.genesisHash = blockHash(genesis.header, sha);
  return report;
}

/** The proof's side flags are exactly `shape` (the path of one position). */
export function sameShape(proof: readonly { right: boolean }[], shape: readonly boolean[]): boolean {
  return proof.length === shape.length && proof.every((step, i) => step.right === shape[i]);
}
