/**
 * Light evidence (GET /evidence/{height}/{index}): one self-contained document that proves a record final, verified
 * offline from the genesis block alone, whose size grows with the number of validator-set changes, not with the
 * chain.
 *
 * Why it is sound. A header commits, through `prev_membership_height`, to the most recent earlier block that carried
 * validator changes, and that block's header to the one before it, down to genesis (0): the back-chain of membership
 * blocks. The verifier starts from the pinned genesis set and takes the membership blocks in order. Each must name
 * the previous one (so none is left out, added or reordered), prove every one of its changes at its own position
 * under its `merkle_root` (so none is altered, dropped or moved), and carry a quorum of seals from the set the
 * earlier ones make active (spec section 3); its changes then give the next set. The record's block must name the
 * last of them and be sealed by the set they leave. Forging any of it takes a quorum of some active set signing a
 * block that is not the chain's: what breaks the ledger's fault assumption and would fool a full chain walk too.
 *
 * Browser-safe: the console, `ledger-node verify-proof`, the kubectl plugin and the tests judge with this code.
 */

import * as z from 'zod';
import { sha256 as platformSha256, verifySignature } from '#platform-crypto';
import { blockHash, proofFor, proofShape } from './block.ts';
import { MerkleProofBody } from './bodies.ts';
import { CheckpointEvidence, judgeCheckpointEvidence, type WitnessRequirement } from './checkpoint-evidence.ts';
import {
  type EvidenceReport,
  judgeFinality,
  MembershipEvidence,
  SealedHeader,
  sameShape,
  short,
  startReport,
  walkMembership,
} from './evidence-walk.ts';
import type { Verify } from './finality.ts';
import { toHex } from './hex.ts';
import { merkleProof, merkleRootBytes, type Sha256 } from './merkle.ts';
import { leafData, verifyProof } from './proof.ts';
import type { Block, BlockHeader } from './schemas.ts';
import { HashHex } from './schemas.ts';

/** The `format` of light evidence: names this shape and its version. */
export const LIGHT_EVIDENCE_FORMAT = 'scriptorium-ledger-evidence/1';

/** GET /evidence/{height}/{index}: a record proven final, verifiable from the genesis block alone. */
export const LightEvidence = z.strictObject({
  format: z.literal(LIGHT_EVIDENCE_FORMAT),
  /** Hash of the chain's block 0; the verifier compares it with the genesis it pins. */
  genesis_hash: HashHex,
  /** Every block below `block` that carried validator changes, oldest first (genesis excluded). */
  membership: z.array(MembershipEvidence),
  /** The record's block: header and finality certificate. */
  block: SealedHeader,
  /** The record and its Merkle proof: the GET /proof body. */
  proof: MerkleProofBody,
  /**
   * A checkpoint covering the block, cosigned by witnesses, with the proofs that tie the block to it (absent when the
   * node had none covering the block yet: ask again later). See checkpoint-evidence.ts.
   */
  checkpoint: CheckpointEvidence.optional(),
});
export type LightEvidence = z.infer<typeof LightEvidence>;

/**
 * The light-evidence form of a block that carried validator changes.
 * @example membershipEvidence(await store.get(12))
 */
export function membershipEvidence(block: Block, sha?: Sha256): MembershipEvidence {
  if (block.validator_changes.length === 0)
    throw new RangeError(`block ${block.header.height} carries no validator changes`);
  const hash = sha ?? platformSha256;
  // One pass over the records for the sibling every change's proof ends with (proofFor would redo it per change).
  const recordsRoot = toHex(merkleRootBytes(block.records.map(leafData), hash));
  const changes = block.validator_changes.map(leafData);
  return {
    header: block.header,
    commit_signatures: block.commit_signatures,
    validator_changes: block.validator_changes.map((change, j) => ({
      change,
      proof: [...merkleProof(changes, j, hash), { sibling: recordsRoot, right: false }],
    })),
  };
}

/**
 * The membership blocks below `header`, oldest first, found by following `prev_membership_height` from it;
 * `entryAt(h)` gives the membership evidence of block h (a node caches them: they never change).
 * @example membershipBelow(block.header, (h) => membershipEvidence(store.get(h)))
 */
export function membershipBelow(
  header: BlockHeader,
  entryAt: (height: number) => MembershipEvidence,
): MembershipEvidence[] {
  const out: MembershipEvidence[] = [];
  let next = header.prev_membership_height;
  let above = header.height;
  while (next > 0) {
    if (next >= above) throw new RangeError(`block ${above} points up to membership block ${next}`);
    const entry = entryAt(next);
    out.push(entry);
    above = next;
    next = entry.header.prev_membership_height;
  }
  return out.reverse();
}

/**
 * Light evidence of record `index` of `block`; null when the block has no such record.
 * @example lightEvidence(genesisHash, membershipBelow(block.header, entryAt), block, 3)
 */
export function lightEvidence(
  genesisHash: string,
  membership: readonly MembershipEvidence[],
  block: Block,
  index: number,
  sha?: Sha256,
  checkpoint?: CheckpointEvidence,
): LightEvidence | null {
  const proof = proofFor(block, index, 'record', sha);
  if (proof === null) return null;
  return {
    format: LIGHT_EVIDENCE_FORMAT,
    genesis_hash: genesisHash,
    membership: [...membership],
    block: { header: block.header, commit_signatures: block.commit_signatures },
    proof,
    ...(checkpoint ? { checkpoint } : {}),
  };
}

/**
 * Verifies that a block (its sealed header) is final, from the pinned genesis and the membership blocks below it:
 * what a light client needs to judge a block's certificate without the chain (the console's finality check).
 * @example verifyLightFinality(genesis, evidence.membership, { header, commit_signatures }).ok
 */
export function verifyLightFinality(
  genesis: Block,
  membership: readonly MembershipEvidence[],
  sealed: SealedHeader,
  verify: Verify = verifySignature,
  sha?: Sha256,
): EvidenceReport {
  const report = startReport(genesis, sha);
  if (report.genesisHash === undefined) return report;
  const active = walkMembership(genesis, membership, sealed.header, report, verify, sha);
  if (active !== null) report.ok = judgeFinality(sealed, active, report, verify, sha);
  return report;
}

/**
 * Verifies light evidence against the pinned genesis block (see the file's comment). With a witness requirement the
 * evidence must also carry a checkpoint covering the block that the policy's witnesses cosigned
 * (checkpoint-evidence.ts); without one, a checkpoint it carries is judged except for its cosignatures. Never throws
 * on bad input: a shape it cannot read is a failed report whose last line says why.
 * @example verifyLightEvidence(await (await fetch(`${node}/evidence/12/0`)).json(), genesis).ok
 */
export function verifyLightEvidence(
  input: unknown,
  genesis: Block,
  verify: Verify = verifySignature,
  sha?: Sha256,
  witnesses?: WitnessRequirement,
): EvidenceReport {
  const report = startReport(genesis, sha);
  const { lines } = report;
  const fail = (line: string): EvidenceReport => {
    lines.push(line);
    return report;
  };
  if (report.genesisHash === undefined) return report;
  const parsed = LightEvidence.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(`unreadable evidence: ${issue?.path.join('.') || '(top)'} ${issue?.message ?? ''}`.trimEnd());
  }
  const ev = parsed.data;
  if (ev.genesis_hash !== report.genesisHash)
    return fail(
      `the evidence is for the chain whose block 0 hashes to ${ev.genesis_hash}, not the pinned ${report.genesisHash}`,
    );
  const target = ev.block.header;
  const active = walkMembership(genesis, ev.membership, target, report, verify, sha);
  if (active === null) return report;
  const where = `block ${target.height}`;
  const p = ev.proof;
  const hash = blockHash(target, sha);
  if (p.height !== target.height || p.block_hash !== hash || p.merkle_root !== target.merkle_root)
    return fail(`the proof is for block ${p.height} (hash ${short(p.block_hash)}), not ${where} (hash ${short(hash)})`);
  if (p.index >= target.record_count)
    return fail(`${where} holds ${target.record_count} records, no record ${p.index}`);
  if (!sameShape(p.proof, proofShape(target, 'record', p.index)))
    return fail(`record ${p.index}'s proof is not the path of record ${p.index} of ${target.record_count}`);
  if (
    !verifyProof({ record: p.record, proof: p.proof, merkle_root: target.merkle_root, ...(sha ? { sha256: sha } : {}) })
  )
    return fail(`record ${p.index} does not hash up to ${where}'s merkle_root through the proof`);
  lines.push(
    `record ${p.index} of ${where}: ${p.proof.length} proof step${p.proof.length === 1 ? '' : 's'} up to merkle_root ${short(target.merkle_root)}`,
  );
  if (!judgeFinality(ev.block, active, report, verify, sha)) return report;
  if (ev.checkpoint === undefined) {
    if (witnesses !== undefined)
      return fail(
        `the evidence carries no checkpoint: the policy wants one cosigned by ${witnesses.policy.threshold} of ${witnesses.policy.witnesses.length} trusted witnesses (ask again once a cosigned checkpoint covers block ${target.height})`,
      );
    report.ok = true;
    return report;
  }
  const checkpoint = judgeCheckpointEvidence(
    ev.checkpoint,
    genesis,
    ev.membership,
    ev.block,
    report,
    witnesses,
    verify,
    sha,
  );
  if (checkpoint === null) return report;
  report.checkpoint = checkpoint;
  report.ok = true;
  return report;
}
